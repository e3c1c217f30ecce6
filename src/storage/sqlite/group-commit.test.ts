import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { GROUP_BUDGET_MS, GroupCommit } from './group-commit.ts';

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function database(): DatabaseSync {
  const db = new DatabaseSync(':memory:');
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  return db;
}

/** The values of `t` in the order they were inserted. */
function values(db: DatabaseSync): unknown[] {
  return db
    .prepare('SELECT v FROM t ORDER BY rowid')
    .all()
    .map((row) => row.v);
}

describe('group commit', () => {
  it('settles each write with its result once it is committed', async () => {
    const db = database();
    const writes = new GroupCommit(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const results = await Promise.all(
      ['a', 'b', 'c'].map((v) =>
        writes.write(() => {
          insert.run(v);
          return v;
        }),
      ),
    );
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.equal(db.isTransaction, false);
    assert.equal(db.prepare('SELECT count(*) AS n FROM t').get()!.n, 3);
  });

  it('a transaction takes no further write once its writes ran past the budget: the event loop runs before the rest', async () => {
    const db = database();
    const writes = new GroupCommit(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const order: string[] = [];
    const slow = writes.write(() => {
      spin(GROUP_BUDGET_MS + 1);
      insert.run('slow');
      order.push('slow');
    });
    const next = writes.write(() => {
      insert.run('next');
      order.push('next');
    });
    setImmediate(() => order.push('event loop'));
    await Promise.all([slow, next]);
    assert.deepEqual(order, ['slow', 'event loop', 'next']);
    assert.deepEqual(values(db), ['slow', 'next']);
  });

  it('a failing write is undone alone; the others of its transaction commit', async () => {
    const db = database();
    const writes = new GroupCommit(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const outcomes = await Promise.allSettled([
      writes.write(() => insert.run('kept')),
      writes.write(() => {
        insert.run('undone');
        throw new Error('refused');
      }),
      writes.write(() => insert.run('also kept')),
    ]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(values(db), ['kept', 'also kept']);
  });
});
