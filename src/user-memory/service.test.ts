import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSqliteStorage } from '../storage/sqlite/sqlite-storage.ts';
import { userMemorySettings } from './config.ts';
import { MemoryRefusal, UserMemoryService, type FactRequest, type MemoryReader } from './service.ts';

/** The rules of user memory over a real (in-memory SQLite) store: visibility, caps and shared keys. */

async function setUp() {
  const storage = await openSqliteStorage(':memory:');
  let now = 1_000;
  const service = new UserMemoryService(storage.userMemories, () => now++);
  const remember = async (reader: MemoryReader, fact: FactRequest, settings = userMemorySettings({})) =>
    service.remember(reader, service.factWrite(reader, fact, settings), settings);
  return { storage, service, remember };
}

const everyVisibility = userMemorySettings({ guardrails: { allowedVisibilities: ['self', 'group', 'global'] } });

describe('user memory rules', () => {
  it('group entries are seen by the agents of that group discussion and by their writer, not by others', async () => {
    const { storage, service, remember } = await setUp();
    const inGroup: MemoryReader = { userId: 'u', agentId: 'a', groupId: 'g1' };
    await remember(inGroup, { key: 'plan', value: 'trip', visibility: 'group' }, everyVisibility);
    const keysFor = async (reader: MemoryReader) =>
      (await service.recall(reader, everyVisibility)).map((entry) => entry.key);
    assert.deepEqual(await keysFor({ userId: 'u', agentId: 'b', groupId: 'g1' }), ['plan']);
    assert.deepEqual(await keysFor({ userId: 'u', agentId: 'a' }), ['plan']);
    assert.deepEqual(await keysFor({ userId: 'u', agentId: 'b', groupId: 'g2' }), []);
    assert.deepEqual(await keysFor({ userId: 'u', agentId: 'b' }), []);
    // Outside a group discussion a group write stays private to its agent.
    const { entry } = await remember(
      { userId: 'u', agentId: 'c' },
      { key: 'x', value: '1', visibility: 'group' },
      everyVisibility,
    );
    assert.equal(entry.visibility, 'self');
    await storage.close();
  });

  it('a self note and a shared fact may share a key; a shared fact of another agent is not replaced', async () => {
    const { storage, service, remember } = await setUp();
    const a: MemoryReader = { userId: 'u', agentId: 'a' };
    const b: MemoryReader = { userId: 'u', agentId: 'b' };
    await remember(a, { key: 'lang', value: 'de', visibility: 'global' }, everyVisibility);
    await remember(a, { key: 'lang', value: 'private note' }, everyVisibility);
    assert.equal((await service.list('u')).length, 2);
    await assert.rejects(
      remember(b, { key: 'lang', value: 'fr', visibility: 'global' }, everyVisibility),
      MemoryRefusal,
    );
    const overwriting = userMemorySettings({
      guardrails: { allowedVisibilities: ['global'], allowGlobalKeyOverwrite: true },
    });
    await remember(b, { key: 'lang', value: 'fr', visibility: 'global' }, overwriting);
    assert.equal((await service.list('u', { visibility: 'global' }))[0]!.value, 'fr');
    const unchanged = await remember(b, { key: 'lang', value: 'fr', visibility: 'global' }, overwriting);
    assert.equal(unchanged.written, false);
    await storage.close();
  });

  it('at maxEntriesPerUser: reject refuses a new entry, evict_oldest removes the agent’s own oldest', async () => {
    const { storage, service, remember } = await setUp();
    const a: MemoryReader = { userId: 'u', agentId: 'a' };
    const rejecting = userMemorySettings({ maxEntriesPerUser: 2, onCapReached: 'reject' });
    await remember(a, { key: 'k1', value: '1' }, rejecting);
    await remember(a, { key: 'k2', value: '2' }, rejecting);
    await assert.rejects(remember(a, { key: 'k3', value: '3' }, rejecting), /the most allowed/);
    await remember(a, { key: 'k2', value: 'changed' }, rejecting); // an update adds no entry
    const evicting = userMemorySettings({ maxEntriesPerUser: 2 });
    await remember(a, { key: 'k3', value: '3' }, evicting);
    assert.deepEqual((await service.list('u')).map((entry) => entry.key).sort(), ['k2', 'k3']);
    // Another agent's entries are never evicted for this one.
    await assert.rejects(remember({ userId: 'u', agentId: 'b' }, { key: 'k4', value: '4' }, evicting), /too few/);
    await storage.close();
  });

  it('guardrails: key and value length, categories', async () => {
    const { storage, remember } = await setUp();
    const a: MemoryReader = { userId: 'u', agentId: 'a' };
    const settings = userMemorySettings({ guardrails: { maxKeyLength: 5, maxValueLength: 3 } });
    await assert.rejects(remember(a, { key: 'toolong', value: '1' }, settings), /key is longer than 5/);
    await assert.rejects(remember(a, { key: 'k', value: '1234' }, settings), /value is longer than 3/);
    await assert.rejects(remember(a, { key: 'k', value: '1', category: 'legacy' }, settings), /category 'legacy'/);
    await storage.close();
  });
});
