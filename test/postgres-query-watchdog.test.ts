import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPostgresStorage } from '../src/storage/postgres/postgres-storage.ts';
import { QueryWatchdog } from '../src/storage/postgres/query-watchdog.ts';
import { createTestDatabase } from './support/postgres.ts';
import { oldGenerationGrowthPer } from './support/young-generation.ts';

describe('the PostgreSQL query watchdog', () => {
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  it('fails a query without an answer in time with "Query read timeout" and closes its connection', async () => {
    const watchdog = new QueryWatchdog(200);
    const [slow, other] = [new pg.Client(database.url), new pg.Client(database.url)];
    try {
      for (const client of [slow, other]) {
        await client.connect();
        client.on('error', () => {});
        watchdog.watch(client);
      }
      const started = Date.now();
      const answers = await Promise.allSettled([
        slow.query('SELECT pg_sleep(5)'),
        other.query('SELECT pg_sleep(0.05)'),
      ]);
      const waited = Date.now() - started;
      assert.equal(answers[0].status, 'rejected');
      assert.match(String((answers[0] as PromiseRejectedResult).reason), /Query read timeout/);
      assert.ok(waited >= 200 && waited < 2_000, `failed after ${waited} ms`);
      assert.equal(answers[1].status, 'fulfilled', 'a query answered in time is left alone');
      await assert.rejects(slow.query('SELECT 1'), 'the connection was closed');
    } finally {
      watchdog.close();
      await Promise.all([slow.end().catch(() => {}), other.end().catch(() => {})]);
    }
  });

  /**
   * pg's own `query_timeout` (a timer per query) kept each query's objects alive through two young collections, so
   * they were copied into the old generation (issue 15): ~10.4 KB a query here. The store's pool bounds its queries
   * with the watchdog instead: ~0.9 KB.
   */
  it("leaves a store query's parameters and result to die young", async () => {
    const storage = await openPostgresStorage(database.url, 30_000);
    try {
      const queries = 2_000;
      const run = async () => {
        for (let index = 0; index < queries; index += 4)
          await Promise.all(
            [0, 1, 2, 3].map((k) =>
              storage.pool.query('SELECT $1::text AS body', [`${index + k} ${'x'.repeat(4_000)}`]),
            ),
          );
      };
      await run(); // connections, prepared plans, first compilations
      const grownPerQuery = await oldGenerationGrowthPer(queries, run);
      assert.ok(grownPerQuery < 3_000, `the old generation grew by ${grownPerQuery.toFixed(0)} bytes a query`);
    } finally {
      await storage.close();
    }
  });
});
