import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployAgent, startConversation, welcomeOutputs } from './support/agents.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * Live conversations are kept in memory up to `svc.conversations.cache-size`, least recently used out first:
 * a conversation in use stays, one nobody touched is read from the store again (seen in the store metrics).
 */
describe('the conversation cache', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.conversations.cache-size': 2 });

  /** How often conversations were read from the store so far. */
  const storeLoads = async (): Promise<number> => {
    const metrics = await api.get('/q/metrics');
    assert.equal(metrics.status, 200);
    const line = metrics.text
      .split('\n')
      .find(
        (text) =>
          /^svc_store_operations_total\{/.test(text) &&
          text.includes('kind="conversations"') &&
          text.includes('operation="load"') &&
          text.includes('outcome="ok"'),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  const read = async (conversationId: string) => assert.equal((await api.get(`/agents/${conversationId}`)).status, 200);

  it('keeps a recently used conversation when it is full, and reads the least recently used one again', async () => {
    const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
    const first = (await startConversation(api, agentId)).conversationId as string;
    const second = (await startConversation(api, agentId)).conversationId as string;
    await read(first); // now the most recently used
    const before = await storeLoads();
    await read(first);
    assert.equal(await storeLoads(), before, 'both are cached');

    await startConversation(api, agentId); // a third one: the cache is full, the least recently used one goes
    await read(first);
    assert.equal(await storeLoads(), before, 'the recently used conversation is still cached');
    await read(second);
    assert.equal(await storeLoads(), before + 1, 'the least recently used one was read from the store again');
  });
});
