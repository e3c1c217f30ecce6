import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPeriodicJob } from '../src/ops/periodic-job.ts';
import type { ClusterCoordination } from '../src/storage/cluster-ports.ts';
import { LocalCluster } from '../src/storage/local-cluster.ts';
import { PostgresCluster } from '../src/storage/postgres/cluster.ts';
import { createTestDatabase } from './support/postgres.ts';

/** A job body that stays running until `finish()` is called, and says when it has started. */
function heldJob() {
  let finish!: () => void;
  let started!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    finish,
    running,
    work: async () => {
      started();
      await done;
    },
  };
}

function exclusiveJobContract(name: string, twoInstances: () => Promise<[ClusterCoordination, ClusterCoordination]>) {
  describe(`${name}: cluster-wide exclusive jobs`, () => {
    let first: ClusterCoordination;
    let second: ClusterCoordination;
    before(async () => {
      [first, second] = await twoInstances();
    });

    test('a job running on one instance is skipped on the other, and runs there once it has ended', async () => {
      const held = heldJob();
      const firstRun = first.runExclusive('retention', 60_000, held.work);
      await held.running;
      let secondRan = false;
      assert.equal(
        await second.runExclusive('retention', 60_000, async () => {
          secondRan = true;
        }),
        false,
      );
      assert.equal(secondRan, false);
      held.finish();
      assert.equal(await firstRun, true);
      assert.equal(await second.runExclusive('retention', 60_000, async () => {}), true);
    });

    test('different jobs do not exclude each other', async () => {
      const held = heldJob();
      const firstRun = first.runExclusive('retention', 60_000, held.work);
      await held.running;
      assert.equal(await second.runExclusive('user-memories', 60_000, async () => {}), true);
      held.finish();
      await firstRun;
    });

    test('a job that throws releases the job and the error reaches the caller', async () => {
      await assert.rejects(
        first.runExclusive('retention', 60_000, async () => {
          throw new Error('sweep failed');
        }),
        /sweep failed/,
      );
      assert.equal(await second.runExclusive('retention', 60_000, async () => {}), true);
    });

    test('a periodic job on both instances never runs twice at once', async () => {
      let concurrent = 0;
      let mostConcurrent = 0;
      let runs = 0;
      const run = async () => {
        concurrent++;
        runs++;
        mostConcurrent = Math.max(mostConcurrent, concurrent);
        await new Promise((resolve) => setTimeout(resolve, 20));
        concurrent--;
      };
      const jobs = [first, second].map((cluster) =>
        startPeriodicJob({
          name: 'sweep',
          intervalMillis: 5,
          cluster,
          run,
          onError: (error) => assert.fail(String(error)),
        }),
      );
      while (runs < 6) await new Promise((resolve) => setTimeout(resolve, 10));
      await Promise.all(jobs.map((job) => job.stop()));
      assert.equal(mostConcurrent, 1);
    });
  });
}

exclusiveJobContract('embedded store', async () => {
  const local = new LocalCluster();
  return [local, local];
});

describe('PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const clusters: PostgresCluster[] = [];
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(clusters.map((cluster) => cluster.close()));
    await database.drop();
  });
  exclusiveJobContract('two instances on one PostgreSQL database', async () => {
    clusters.push(new PostgresCluster(database.url, 4), new PostgresCluster(database.url, 4));
    return [clusters[0] as PostgresCluster, clusters[1] as PostgresCluster];
  });
});
