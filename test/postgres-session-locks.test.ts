import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { SessionTryLocks } from '../src/storage/postgres/session-locks.ts';
import { createTestDatabase } from './support/postgres.ts';

const LOCK_SPACE = 7262;

describe('session try-locks on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let other: pg.Client;

  before(async () => {
    database = await createTestDatabase();
    other = new pg.Client({ connectionString: database.url });
    await other.connect();
  });
  after(async () => {
    await other?.end();
    await database?.drop();
  });

  const lockElsewhere = (key: string) =>
    other.query('SELECT pg_advisory_lock(hashtextextended($1, $2))', [key, LOCK_SPACE]);
  const unlockElsewhere = (key: string) =>
    other.query('SELECT pg_advisory_unlock(hashtextextended($1, $2))', [key, LOCK_SPACE]);

  it('grants the free keys of one tick together; refuses a key held elsewhere, or held or asked for here already', async () => {
    const locks = new SessionTryLocks(database.url, 10_000, 0, LOCK_SPACE);
    try {
      await lockElsewhere('taken');
      const [a, b, taken, again] = await Promise.all([
        locks.tryLock('a'),
        locks.tryLock('b'),
        locks.tryLock('taken'),
        locks.tryLock('a'),
      ]);
      assert.ok(a && b && a === b, 'one session holds both');
      assert.equal(taken, undefined);
      assert.equal(again, undefined);
      await unlockElsewhere('taken');

      // Held here: a waiter elsewhere waits until the release, then gets it.
      let granted = false;
      const waiting = other
        .query('SELECT pg_advisory_lock(hashtextextended($1, $2))', ['a', LOCK_SPACE])
        .then(() => (granted = true));
      await sleep(100);
      assert.equal(granted, false);
      await locks.unlock('a', a);
      await waiting;
      // Waited for elsewhere (held there now): not granted; released there, granted again.
      assert.equal(await locks.tryLock('a'), undefined);
      await unlockElsewhere('a');
      const retaken = await locks.tryLock('a');
      assert.ok(retaken);
      await locks.unlock('a', retaken);
      await locks.unlock('b', b);
    } finally {
      await locks.close();
    }
  });

  it('sends the next round trip only after the one under way answered (one query at a time on the session)', async () => {
    const locks = new SessionTryLocks(database.url, 10_000, 0, LOCK_SPACE);
    const running = new Map<pg.Client, number>();
    let mostAtOnce = 0;
    const query = pg.Client.prototype.query;
    // Counts the queries each client has under way (pg queues one sent while another runs; pg 9 refuses it).
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const now = (running.get(this) ?? 0) + 1;
      running.set(this, now);
      mostAtOnce = Math.max(mostAtOnce, now);
      const result = (query as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      const done = () => running.set(this, (running.get(this) ?? 1) - 1);
      result.then(done, done);
      return result;
    } as typeof query;
    try {
      const session = await locks.tryLock('first');
      assert.ok(session);
      // Each try-lock after the first comes a tick after the one before, so its flush is due while that round trip runs.
      const tries: Array<Promise<pg.Client | undefined>> = [];
      for (let n = 0; n < 20; n++) {
        tries.push(locks.tryLock(`key-${n}`));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const granted = await Promise.all(tries);
      assert.ok(
        granted.every((held) => held === session),
        'every free key granted on the one session',
      );
      assert.equal(mostAtOnce, 1);
      await Promise.all([...granted.keys()].map((n) => locks.unlock(`key-${n}`, session)));
      await locks.unlock('first', session);
      const { rows } = await other.query(
        `SELECT count(*)::int AS held FROM pg_locks
         WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      assert.equal(rows[0].held, 0, 'every key released');
    } finally {
      pg.Client.prototype.query = query;
      await locks.close();
    }
  });

  it('a session that stays idle for the claim is ended by the server, and its locks with it', async () => {
    const locks = new SessionTryLocks(database.url, 1000, 0, LOCK_SPACE);
    try {
      const session = await locks.tryLock('claimed');
      assert.ok(session);
      await sleep(1500);
      const { rows } = await other.query('SELECT pg_try_advisory_lock(hashtextextended($1, $2)) AS granted', [
        'claimed',
        LOCK_SPACE,
      ]);
      assert.equal(rows[0].granted, true, 'the claim expired');
      await unlockElsewhere('claimed');
      await locks.unlock('claimed', session);
      // A new session serves the next try.
      const next = await locks.tryLock('claimed');
      assert.ok(next && next !== session);
      await locks.unlock('claimed', next);
    } finally {
      await locks.close();
    }
  });
});
