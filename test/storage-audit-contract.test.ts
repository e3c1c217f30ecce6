/**
 * The audit storage contract: one suite, run against every adapter (the embedded store keeps a turn's entries in
 * one block row, PostgreSQL one row per entry; both answer alike). Each test uses its own conversation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuditRow } from '../src/storage/audit-ports.ts';
import { storageTargets, useStorage, type StorageTarget } from './support/storage-targets.ts';

let counter = 0;
const uniqueConversation = () =>
  `conv${(++counter).toString().padStart(4, '0')}${Math.random().toString(16).slice(2, 10)}`;

/** One turn's entries: `count` rows with consecutive sequences from `first`. */
function turn(conversationId: string, first: number, count: number): AuditRow[] {
  return Array.from({ length: count }, (_, offset) => {
    const sequence = first + offset;
    const id = `${conversationId}-${String(sequence).padStart(6, '0')}`;
    return {
      id,
      conversationId,
      sequence,
      agentId: 'agent',
      agentVersion: 1,
      timestamp: new Date(1_700_000_000_000 + sequence).toISOString(),
      document: JSON.stringify({ id, conversationId, sequence, note: `entry ${sequence}` }),
    };
  });
}

const sequences = (documents: readonly string[]) => documents.map((document) => JSON.parse(document).sequence);

function contract(name: string, setup: () => Promise<StorageTarget>): void {
  describe(`audit storage contract: ${name}`, () => {
    const { storage, reopen } = useStorage(setup);
    const audit = () => storage().audit;

    test('entries of several turns page by skip and limit across turns, in sequence order', async () => {
      const conversation = uniqueConversation();
      await audit().append(turn(conversation, 1, 4));
      await audit().append([...turn(conversation, 5, 4), ...turn(uniqueConversation(), 1, 3)]);
      await audit().append(turn(conversation, 9, 2));
      assert.equal(await audit().count(conversation), 10);
      assert.deepEqual(sequences(await audit().list(conversation, 0, 100)), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(sequences(await audit().list(conversation, 2, 4)), [3, 4, 5, 6]);
      assert.deepEqual(sequences(await audit().list(conversation, 8, 5)), [9, 10]);
      assert.deepEqual(await audit().list(conversation, 10, 5), []);
      assert.equal(JSON.parse((await audit().latest(conversation))!).sequence, 10);
    });

    test('each document comes back as the JSON it was given', async () => {
      const conversation = uniqueConversation();
      const rows = turn(conversation, 1, 3);
      await audit().append(rows);
      assert.deepEqual(
        await audit().list(conversation, 0, 10),
        rows.map((row) => row.document),
      );
    });

    test('a retried batch that did commit writes nothing twice', async () => {
      const conversation = uniqueConversation();
      const rows = turn(conversation, 1, 4);
      await audit().append(rows);
      await audit().append(rows);
      assert.equal(await audit().count(conversation), 4);
      assert.deepEqual(sequences(await audit().list(conversation, 0, 10)), [1, 2, 3, 4]);
    });

    test('an unknown conversation has no entries; entries survive a reopen', async () => {
      assert.equal(await audit().count(uniqueConversation()), 0);
      assert.deepEqual(await audit().list(uniqueConversation(), 0, 10), []);
      assert.equal(await audit().latest(uniqueConversation()), undefined);
      const conversation = uniqueConversation();
      await audit().append(turn(conversation, 1, 2));
      await reopen();
      assert.deepEqual(sequences(await audit().list(conversation, 0, 10)), [1, 2]);
    });
  });
}

contract('sqlite', storageTargets.sqlite);
contract('postgres', storageTargets.postgres);
