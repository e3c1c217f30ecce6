/**
 * The audit storage contract: one suite, run against every adapter. Both keep a block (a turn's entries) as one row
 * and answer ranges of entries with the blocks holding them. Each test uses its own conversation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { entriesOfBlock } from '../src/ops/audit-block.ts';
import type { AuditBlock, AuditStore } from '../src/storage/audit-ports.ts';
import { PostgresAuditStore } from '../src/storage/postgres/audit-store.ts';
import { postgresMigrations } from '../src/storage/postgres/migrations.ts';
import { migrate } from '../src/storage/postgres/postgres-storage.ts';
import { createTestDatabase } from './support/postgres.ts';
import { storageTargets, useStorage, type StorageTarget } from './support/storage-targets.ts';

let counter = 0;
const uniqueConversation = () =>
  `conv${(++counter).toString().padStart(4, '0')}${Math.random().toString(16).slice(2, 10)}`;

/** One turn's block: `count` entries with consecutive sequences from `first` (its document names them). */
function turn(conversationId: string, first: number, count: number): AuditBlock {
  const sequences = Array.from({ length: count }, (_, offset) => first + offset);
  return {
    firstId: `${conversationId}-${String(first).padStart(6, '0')}`,
    conversationId,
    firstSequence: first,
    entryCount: count,
    agentId: 'agent',
    agentVersion: 1,
    timestamp: new Date(1_700_000_000_000 + first).toISOString(),
    document: JSON.stringify(sequences),
  };
}

/** The entries numbered `skip` to `skip + limit - 1` as the store's blocks give them. */
async function range(store: AuditStore, conversationId: string, skip: number, limit: number): Promise<number[]> {
  const { documents, skipInFirst } = await store.blocks(conversationId, skip, limit);
  return documents.flatMap((document) => JSON.parse(document) as number[]).slice(skipInFirst, skipInFirst + limit);
}

function contract(name: string, setup: () => Promise<StorageTarget>): void {
  describe(`audit storage contract: ${name}`, () => {
    const { storage, reopen } = useStorage(setup);
    const audit = () => storage().audit;

    test('ranges of entries across blocks come back as the blocks holding them, in sequence order', async () => {
      const conversation = uniqueConversation();
      await audit().append([turn(conversation, 1, 4)]);
      await audit().append([turn(conversation, 5, 4), turn(uniqueConversation(), 1, 3)]);
      await audit().append([turn(conversation, 9, 2)]);
      assert.equal(await audit().count(conversation), 10);
      assert.deepEqual(await range(audit(), conversation, 0, 100), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(await range(audit(), conversation, 2, 4), [3, 4, 5, 6]);
      assert.deepEqual(await range(audit(), conversation, 8, 5), [9, 10]);
      const middle = await audit().blocks(conversation, 4, 4);
      assert.deepEqual(middle, { documents: ['[5,6,7,8]'], skipInFirst: 0 }, 'only the blocks in range are read');
      const across = await audit().blocks(conversation, 3, 2);
      assert.deepEqual(across, { documents: ['[1,2,3,4]', '[5,6,7,8]'], skipInFirst: 3 });
      assert.deepEqual(await audit().blocks(conversation, 10, 5), { documents: [], skipInFirst: 0 });
      assert.deepEqual(await audit().blocks(conversation, 0, 0), { documents: [], skipInFirst: 0 });
      assert.equal(await audit().latest(conversation), '[9,10]');
    });

    test('each document comes back as the text it was given', async () => {
      const conversation = uniqueConversation();
      const block = { ...turn(conversation, 1, 1), document: '{"deltas":[{"text":"Grüße → ✓"}]}' };
      await audit().append([block]);
      assert.deepEqual((await audit().blocks(conversation, 0, 10)).documents, [block.document]);
    });

    test('a retried append that did commit writes nothing twice', async () => {
      const conversation = uniqueConversation();
      const blocks = [turn(conversation, 1, 4), turn(conversation, 5, 4)];
      await audit().append(blocks);
      await audit().append(blocks);
      assert.equal(await audit().count(conversation), 8);
      assert.deepEqual(await range(audit(), conversation, 0, 10), [1, 2, 3, 4, 5, 6, 7, 8]);
    });

    test('an unknown conversation has no entries; entries survive a reopen', async () => {
      assert.equal(await audit().count(uniqueConversation()), 0);
      assert.deepEqual(await audit().blocks(uniqueConversation(), 0, 10), { documents: [], skipInFirst: 0 });
      assert.equal(await audit().latest(uniqueConversation()), undefined);
      const conversation = uniqueConversation();
      await audit().append([turn(conversation, 1, 2)]);
      await reopen();
      assert.deepEqual(await range(audit(), conversation, 0, 10), [1, 2]);
    });
  });
}

contract('sqlite', storageTargets.sqlite);
contract('postgres', storageTargets.postgres);

describe('audit ledger on PostgreSQL: entries stored one per row before blocks', () => {
  test('are kept by the migration as blocks of one, read back whole; the blocks table is write-once', async () => {
    const database = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const blocksMigration = postgresMigrations.findIndex((migration) => migration.name.includes('kept in blocks'));
      await migrate(pool, postgresMigrations.slice(0, blocksMigration));
      const entry = (sequence: number) => ({ id: `id${sequence}`, conversationId: 'c1', sequence, note: 'Grüße' });
      for (const sequence of [2, 1])
        await pool.query(
          `INSERT INTO audit_entries (id, conversation_id, sequence, agent_id, agent_version, created_at, document)
           VALUES ($1, 'c1', $2, 'agent', 1, '2026-01-01T00:00:00.000Z', $3)`,
          [`id${sequence}`, sequence, JSON.stringify(entry(sequence))],
        );
      await migrate(pool, postgresMigrations);
      const store = new PostgresAuditStore(pool);
      assert.equal(await store.count('c1'), 2);
      const { documents, skipInFirst } = await store.blocks('c1', 0, 10);
      assert.equal(skipInFirst, 0);
      assert.deepEqual(documents.flatMap(entriesOfBlock), [entry(1), entry(2)]);
      await assert.rejects(pool.query(`UPDATE audit_blocks SET documents = '[]'`), /write-once/);
      await assert.rejects(pool.query('DELETE FROM audit_blocks'), /write-once/);
      await assert.rejects(pool.query('TRUNCATE audit_blocks'), /write-once/);
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
