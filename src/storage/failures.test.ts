import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import pg from 'pg';
import { AppError } from '../errors.ts';
import { storeFailure } from './failures.ts';

describe('store failures a caller can act on', () => {
  it('SQLITE_FULL (the database cannot grow) is "insufficient-storage" (507)', () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE t (v TEXT); PRAGMA max_page_count = 3;');
    const error = (() => {
      try {
        for (let n = 0; n < 100; n++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(4000));
      } catch (caught) {
        return caught;
      }
      assert.fail('the insert should have failed');
    })();
    db.close();
    assert.equal(storeFailure(error)?.kind, 'insufficient-storage');
    assert.match(storeFailure(error)!.message, /out of space/);
  });

  it('a refused PostgreSQL connection is "unavailable" (503) with Retry-After, and names no URL', async () => {
    const client = new pg.Client({ connectionString: 'postgres://user:secret@127.0.0.1:1/db' });
    const error = await client.connect().then(
      () => assert.fail('nothing listens on port 1'),
      (caught: unknown) => caught,
    );
    const failure = storeFailure(error);
    assert.equal(failure?.kind, 'unavailable');
    assert.equal(failure.details.retryAfterSeconds, 1);
    assert.ok(!failure.message.includes('secret'));
  });

  it('other errors are left alone', () => {
    assert.equal(storeFailure(new Error('something else')), undefined);
    assert.equal(storeFailure(new AppError('conflict', 'x')), undefined);
    assert.equal(storeFailure(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })), undefined);
    assert.equal(storeFailure('text'), undefined);
  });
});
