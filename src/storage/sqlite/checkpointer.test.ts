import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { Checkpointer } from './checkpointer.ts';

/** The WAL header's checkpoint sequence number: it counts the times the WAL started over from its beginning. */
function walRestarts(walPath: string): number {
  const header = Buffer.alloc(16);
  const fd = openSync(walPath, 'r');
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(12);
}

/** A database file in WAL mode, configured like the serving connection, with a table `t (id, body)`. */
function walDatabase(): { dir: string; path: string; db: DatabaseSync } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-checkpointer-'));
  const path = join(dir, 'store.db');
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
    PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)`);
  return { dir, path, db };
}

describe('the WAL checkpointer', () => {
  it('gets the WAL to start over while commits keep coming (a checkpoint that only copies what was there when it began never catches up)', async () => {
    const { dir, path, db } = walDatabase();
    const checkpointer = new Checkpointer(path, 50, 256);
    try {
      const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
      const body = 'x'.repeat(3000);
      const first = walRestarts(`${path}-wal`);
      // A commit every couple of milliseconds, as under a steady load, until the WAL starts over (or 10 s pass).
      const until = Date.now() + 10_000;
      while (walRestarts(`${path}-wal`) === first && Date.now() < until) {
        db.exec('BEGIN IMMEDIATE');
        for (let row = 0; row < 5; row++) insert.run(body);
        db.exec('COMMIT');
        await setTimeout(2);
      }
      assert.notEqual(walRestarts(`${path}-wal`), first, 'the WAL never started over: it grows without end');
    } finally {
      db.close();
      await checkpointer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
