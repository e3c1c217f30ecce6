import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import type { AuditBlock } from '../audit-ports.ts';
import { SqliteAuditStore } from './audit-store.ts';
import { GroupCommit } from './group-commit.ts';
import { sqliteMigrations } from './migrations.ts';
import { migrate } from './sqlite-storage.ts';

function store(): SqliteAuditStore {
  const db = new DatabaseSync(':memory:');
  migrate(db, sqliteMigrations);
  return new SqliteAuditStore(db, new GroupCommit(db));
}

/** `turns` turns of `conversations` conversations, a block of four entries each, in the order the ledger writes them. */
function blocks(conversations: number, turns: number): AuditBlock[] {
  const result: AuditBlock[] = [];
  let id = 0;
  for (let conversation = 0; conversation < conversations; conversation++)
    for (let turn = 0; turn < turns; turn++) {
      id++;
      const firstSequence = turn * 4 + 1;
      result.push({
        firstId: String(id).padStart(24, '0'),
        conversationId: `c${conversation}`,
        firstSequence,
        entryCount: 4,
        agentId: 'agent',
        agentVersion: 1,
        timestamp: new Date(0).toISOString(),
        document: JSON.stringify({ firstSequence, text: 'x'.repeat(1800) }),
      });
    }
  return result;
}

describe('SQLite audit store', () => {
  it('writes a large append in slices, the event loop running between their transactions', async () => {
    const audit = store();
    let loopTurns = 0;
    let appending = true;
    const count = () => {
      loopTurns++;
      if (appending) setImmediate(count);
    };
    setImmediate(count);
    // 400 conversations' blocks: far more than one group transaction takes.
    await audit.append(blocks(400, 1));
    appending = false;
    assert.ok(loopTurns > 1, `the whole append ran in ${loopTurns} turn(s) of the event loop`);
    assert.equal(await audit.count('c399'), 4);
    assert.deepEqual(
      (await audit.blocks('c0', 0, 10)).documents.map((document) => JSON.parse(document).firstSequence),
      [1],
    );
  });

  it('appending the same blocks again (the retry of an append whose slices were partly written) stores each entry once', async () => {
    const audit = store();
    const written = blocks(40, 2);
    await audit.append(written);
    await audit.append(written);
    for (let conversation = 0; conversation < 40; conversation++)
      assert.equal(await audit.count(`c${conversation}`), 8);
  });
});
