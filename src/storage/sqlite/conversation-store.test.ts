import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ConversationRow } from '../runtime-ports.ts';
import { stepString, withStepStrings } from '../runtime-rows.ts';
import { SqliteConversationStore } from './conversation-store.ts';
import { GroupCommit } from './group-commit.ts';
import { sqliteMigrations } from './migrations.ts';
import { migrate } from './sqlite-storage.ts';

const header = (id: string, stepCount: number, revision = 1): ConversationRow => ({
  id,
  agentId: 'agent',
  agentVersion: 1,
  userId: 'user',
  environment: 'production',
  state: 'READY',
  createdOn: 1,
  lastModifiedOn: 1 + revision,
  stepCount,
  revision,
  stateJson: '{}',
});
const stepText = (id: string, index: number) => JSON.stringify({ conversation: id, index, text: 'x'.repeat(200) });

async function withDatabase(use: (db: DatabaseSync) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-conversation-store-'));
  const db = new DatabaseSync(join(dir, 'store.db'));
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0');
    await use(db);
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('SQLite conversation store', () => {
  it('finds the steps of conversations stored before the steps were chained, after the migration', async () => {
    await withDatabase(async (db) => {
      migrate(db, sqliteMigrations.slice(0, -1));
      const insertHeader = db.prepare(`INSERT INTO conversations (id, agent_id, agent_version, user_id, environment,
        state, created_on, last_modified_on, step_count, revision, state_json)
        VALUES (?, 'agent', 1, 'user', 'production', 'READY', 1, 2, ?, 1, '{}')`);
      const insertStep = db.prepare(
        'INSERT INTO conversation_steps (conversation_id, step_index, body) VALUES (?, ?, ?)',
      );
      insertHeader.run('a', 3);
      insertHeader.run('b', 2);
      // Interleaved, as turns of two conversations are.
      for (const [id, index] of [
        ['a', 0],
        ['b', 0],
        ['a', 1],
        ['b', 1],
        ['a', 2],
      ] as const)
        insertStep.run(id, index, stepText(id, index));

      migrate(db, sqliteMigrations);
      const store = new SqliteConversationStore(db, new GroupCommit(db));
      assert.deepEqual(
        withStepStrings(await store.load('a'))?.steps,
        [0, 1, 2].map((index) => stepText('a', index)),
      );
      assert.deepEqual(withStepStrings(await store.loadFrom('b', 1))?.steps, [stepText('b', 1)]);
      // Undo of a's last step, then a new one in its place.
      const outcome = await store.commit('a', 1, {
        row: header('a', 3, 2),
        truncateStepsFrom: 2,
        appendSteps: [stepText('a', 2.5)],
      });
      assert.equal(outcome, 'committed');
      assert.deepEqual(withStepStrings(await store.load('a'))?.steps, [
        stepText('a', 0),
        stepText('a', 1),
        stepText('a', 2.5),
      ]);
      assert.equal(await store.delete('b'), true);
      assert.equal(db.prepare("SELECT count(*) AS n FROM conversation_steps WHERE conversation_id = 'b'").get()!.n, 0);
      assert.equal(db.prepare('SELECT count(*) AS n FROM conversation_steps').get()!.n, 3);
    });
  });

  it('writes no page per turn for finding a step: turns of 16 long conversations in one commit add few pages', async () => {
    await withDatabase(async (db) => {
      migrate(db, sqliteMigrations);
      const writes = new GroupCommit(db);
      const store = new SqliteConversationStore(db, writes);
      const ids = Array.from({ length: 64 }, (_, n) => `conversation-${String(n).padStart(3, '0')}`);
      for (const id of ids) await store.create(header(id, 1), [stepText(id, 0)]);
      const revisions = new Map(ids.map((id) => [id, 1]));
      const turn = (id: string) => {
        const revision = revisions.get(id)!;
        revisions.set(id, revision + 1);
        return store.commit(id, revision, {
          row: header(id, revision + 1, revision + 1),
          appendSteps: [stepText(id, revision)],
        });
      };
      // 150 steps each: every conversation's newest steps are far apart from the others'.
      for (let round = 0; round < 150; round++) await Promise.all(ids.map(turn));
      const walFrames = () => Number(db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get()!.log);
      walFrames(); // copies what is there: the next commit starts the WAL over
      await Promise.all(ids.slice(0, 16).map(turn)); // one group commit
      const frames = walFrames();
      // 16 steps of ~250 bytes fill one or two pages; the headers and their four indexes a few more. A position
      // index of the steps added a leaf page per conversation: 16 more.
      assert.ok(frames <= 12, `one commit of 16 turns wrote ${frames} pages`);
      assert.equal((await store.load(ids[0]!))?.steps.length, 152);
    });
  });

  it('loads the latest steps of a conversation, and reads earlier ones at once', async () => {
    await withDatabase(async (db) => {
      migrate(db, sqliteMigrations);
      const store = new SqliteConversationStore(db, new GroupCommit(db));
      const texts = (id: string, from: number, to: number) =>
        Array.from({ length: to - from }, (_, offset) => stepText(id, from + offset));
      await store.create(header('a', 10), texts('a', 0, 10));
      await store.create(header('b', 4), texts('b', 0, 4));
      const latest = withStepStrings(await store.loadLatest('a', 3));
      assert.deepEqual(latest, { row: header('a', 10), steps: texts('a', 7, 10) });
      assert.deepEqual(withStepStrings(await store.loadLatest('b', 30))?.steps, texts('b', 0, 4), 'fewer: all');
      assert.equal(await store.loadLatest('c', 3), undefined);
      const read = (id: string, from: number, to: number) => store.readStepsNow(id, from, to)?.map(stepString);
      assert.deepEqual(read('a', 2, 5), texts('a', 2, 5));
      assert.deepEqual(read('a', 0, 10), texts('a', 0, 10));
      assert.deepEqual(read('a', 4, 4), []);
      assert.equal(read('c', 0, 1), undefined);
      // Undo of the last two steps, then a new one: the earlier steps are read as they are now.
      await store.commit('a', 1, { row: header('a', 9, 2), truncateStepsFrom: 8, appendSteps: ['{"new":8}'] });
      assert.deepEqual(read('a', 6, 9), [stepText('a', 6), stepText('a', 7), '{"new":8}']);
    });
  });
});
