import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  contextAction,
  createResource,
  deployAgent,
  rulesByContext,
  startConversation,
  welcomeOutputs,
} from './support/agents.ts';
import { controlExtension, controlTask } from './support/control-task.ts';
import type { client } from './support/http.ts';
import { sampleValue, scrape } from './support/metrics.ts';
import { serverOfBlock } from './support/server.ts';

/** How often conversations were read from the store so far (the embedded store loads their latest steps). */
async function storeLoads(api: ReturnType<typeof client>): Promise<number> {
  const metrics = await scrape(api);
  const loads = (operation: string) =>
    sampleValue(metrics, 'svc_store_operations_total', { kind: 'conversations', operation, outcome: 'ok' });
  return loads('load') + loads('loadLatest');
}

/**
 * Live conversations are kept in memory up to `svc.conversations.cache-size`, least recently used out first:
 * a conversation in use stays, one nobody touched is read from the store again (seen in the store metrics).
 */
/** How many conversations `work` read from the store. */
async function loadsDuring(api: ReturnType<typeof client>, work: () => Promise<unknown>): Promise<number> {
  const before = await storeLoads(api);
  await work();
  return (await storeLoads(api)) - before;
}

describe('the conversation cache', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.conversations.cache-size': 2 });
  const read = async (conversationId: string) => assert.equal((await api.get(`/agents/${conversationId}`)).status, 200);

  it('keeps a recently used conversation when it is full, and reads the least recently used one again', async () => {
    const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
    const first = (await startConversation(api, agentId)).conversationId as string;
    const second = (await startConversation(api, agentId)).conversationId as string;
    await read(first); // now the most recently used
    const before = await storeLoads(api);
    await read(first);
    assert.equal(await storeLoads(api), before, 'both are cached');

    await startConversation(api, agentId); // a third one: the cache is full, the least recently used one goes
    await read(first);
    assert.equal(await storeLoads(api), before, 'the recently used conversation is still cached');
    await read(second);
    assert.equal(await storeLoads(api), before + 1, 'the least recently used one was read from the store again');
  });
});

/**
 * A cached conversation keeps its earlier steps as the JSON text the store keeps (parsed when read): what a client
 * reads, undoes and redoes is the same whether the conversation was in the cache or read from the store again. Read
 * from the embedded store, a conversation holds the text of its latest `svc.conversations.retry-window-steps` + 1
 * steps and reads earlier ones when they are asked for: with a window of 2, undo reaches steps it does not hold.
 */
for (const retryWindow of ['100', '1'])
  describe(`the earlier steps of a cached conversation (retry window ${retryWindow})`, () => {
    const { api } = serverOfBlock(
      'sqlite',
      { 'svc.conversations.cache-size': 1, 'svc.conversations.retry-window-steps': retryWindow },
      [controlTask],
    );
    const texts = ['hello', 'Grüße aus Köln', '"hi" → greeting(hi) “quoted” 你好 😀', 'bye'];
    const say = (id: string, text: string) =>
      api.post(`/agents/${id}`, {
        json: {
          input: text,
          context: { property: { type: 'object', value: { name: 'said', value: text, scope: 'conversation' } } },
        },
      });
    const log = async (id: string) => {
      const answer = await api.get(`/agents/${id}?returnCurrentStepOnly=false&returnDetailed=true`);
      assert.equal(answer.status, 200);
      const { lastModifiedOn: _modified, ...rest } = answer.json;
      return rest;
    };

    it('read, undone and redone alike from the cache and from the store', async () => {
      const agentId = await deployAgent(api, { extensions: [controlExtension], outputSet: welcomeOutputs });
      const id = (await startConversation(api, agentId)).conversationId as string;
      for (const text of [...texts, ...texts]) assert.equal((await say(id, text)).status, 200);
      const cached = await log(id);
      assert.equal(cached.conversationSteps.length, 9);
      assert.deepEqual(
        cached.conversationOutputs.slice(1).map((output: { input: string }) => output.input),
        [...texts, ...texts],
      );
      await startConversation(api, agentId); // the cache holds one conversation: the first is read from the store again
      assert.deepEqual(await log(id), cached, 'the same conversation read from the store');

      for (const expected of ['"hi" → greeting(hi) “quoted” 你好 😀', 'Grüße aus Köln', 'hello']) {
        assert.equal((await api.post(`/agents/${id}/undo`)).status, 200);
        const state = await log(id);
        assert.equal(state.conversationProperties.said.value, expected, 'undo restores the earlier step’s properties');
        assert.equal(state.conversationOutputs.at(-1).input, expected);
      }
      assert.equal((await api.post(`/agents/${id}/redo`)).status, 200);
      const redone = await log(id);
      assert.equal(redone.conversationProperties.said.value, 'Grüße aus Köln');
      await startConversation(api, agentId);
      assert.deepEqual(await log(id), redone, 'after undo and redo, read from the store again');
      assert.equal((await api.post(`/agents/${id}/redo`)).status, 200);
      assert.equal((await log(id)).conversationProperties.said.value, '"hi" → greeting(hi) “quoted” 你好 😀');
    });
  });

/** The cache is also bounded by the step text its conversations hold (`svc.conversations.cache-megabytes`). */
describe('the conversation cache by size', () => {
  const { api } = serverOfBlock('sqlite', {
    'svc.conversations.cache-size': 100,
    'svc.conversations.cache-megabytes': 1,
  });
  const read = async (conversationId: string) => assert.equal((await api.get(`/agents/${conversationId}`)).status, 200);

  it('reads a conversation from the store again once others hold more step text than the bound', async () => {
    const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
    const talk = async (messages: number) => {
      const id = (await startConversation(api, agentId)).conversationId as string;
      // Each step keeps a long input twice (as said, and normalised), ~200 KB of text a step.
      for (let n = 0; n < messages; n++)
        assert.equal((await api.post(`/agents/${id}`, { json: { input: `${n} ${'x'.repeat(100_000)}` } })).status, 200);
      return id;
    };
    const first = await talk(2);
    const second = await talk(2);
    assert.equal(await loadsDuring(api, () => read(second)), 0, 'both fit: ~800 KB of step text');
    assert.equal(await loadsDuring(api, () => read(first)), 0);

    const third = await talk(2); // ~1.2 MB now: the least recently used conversation goes
    assert.equal(await loadsDuring(api, () => read(first)), 0, 'the recently used conversation is still cached');
    assert.equal(await loadsDuring(api, () => read(second)), 1, 'the least recently used one is read again');
    // Read from the store, it counts its whole text again: the least recently used one now goes in its place.
    assert.equal(await loadsDuring(api, () => read(first)), 0);
    assert.equal(await loadsDuring(api, () => read(third)), 1, 'pushed out by the conversation read again');
    const answer = await api.get(`/agents/${second}?returnCurrentStepOnly=false`);
    assert.equal(answer.json.conversationSteps.length, 3, 'and is whole');
  });
});

/** How often the latest `operation` on conversations ran. */
async function conversationOperations(api: ReturnType<typeof client>, operation: string): Promise<number> {
  return sampleValue(await scrape(api), 'svc_store_operations_total', {
    kind: 'conversations',
    operation,
    outcome: 'ok',
  });
}

/**
 * Read from the embedded store, a conversation holds the text of its latest steps only (the retry window and one
 * more): a turn that reads nothing older costs the same however long the conversation is; older steps are read from
 * the store when a reader asks for them (the whole log, a rule over every earlier step).
 */
describe('a conversation read from the store with its latest steps', () => {
  const { api } = serverOfBlock('sqlite', {
    'svc.conversations.cache-size': 1,
    'svc.conversations.retry-window-steps': 1,
  });
  const reads = () => conversationOperations(api, 'readStepsNow');
  const byContext = rulesByContext(['pair']);
  const rules = {
    behaviorGroups: [
      ...byContext.behaviorGroups.map((group) => ({
        ...group,
        behaviorRules: group.behaviorRules.map((rule) => ({ ...rule, actions: ['paired', 'again'] })),
      })),
      {
        name: 'History',
        behaviorRules: [
          {
            name: 'Seen a pair before',
            actions: ['seen'],
            // Two actions in a row: the tallies cannot tell, every earlier step is looked at.
            conditions: [{ type: 'actionmatcher', configs: { actions: 'paired,again', occurrence: 'anyStep' } }],
          },
        ],
      },
    ],
  };
  const actionsOf = (answer: { json: { conversationOutputs: Array<{ actions?: string[] }> } }) =>
    answer.json.conversationOutputs.at(-1)?.actions ?? [];

  it('answers a turn from its latest steps, and reads the earlier ones for a rule over every step and for the log', async () => {
    const behaviorUri = await createResource(api, '/behaviorstore/behaviorsets', rules);
    const agentId = await deployAgent(api, {
      extensions: [{ type: 'svc://ai.svc.behavior', config: { uri: behaviorUri } }],
      outputSet: welcomeOutputs,
    });
    const id = (await startConversation(api, agentId)).conversationId as string;
    const say = (context: Record<string, unknown> = {}) => api.post(`/agents/${id}`, { json: { input: 'x', context } });
    assert.deepEqual(actionsOf(await say(contextAction('pair'))), ['paired', 'again']);
    for (let n = 0; n < 12; n++) assert.deepEqual(actionsOf(await say()), ['seen']);
    const whole = await api.get(`/agents/${id}?returnCurrentStepOnly=false&returnDetailed=true`);

    await startConversation(api, agentId); // the cache holds one conversation: this one is read again
    const before = await reads();
    const plain = await api.get(`/agents/${id}`);
    assert.equal(plain.status, 200);
    assert.equal(await reads(), before, 'its latest steps answer a read of the current step');
    assert.deepEqual(actionsOf(await say()), ['seen'], 'the rule found the pair 13 steps back');
    assert.equal(await reads(), before + 1, 'read from the store once, when the rule looked at the earlier steps');

    await startConversation(api, agentId);
    const log = await api.get(`/agents/${id}?returnCurrentStepOnly=false&returnDetailed=true`);
    assert.equal(log.json.conversationSteps.length, 15);
    assert.deepEqual(log.json.conversationSteps.slice(0, 14), whole.json.conversationSteps, 'the same earlier steps');
    assert.deepEqual(log.json.conversationOutputs.slice(0, 14), whole.json.conversationOutputs);
  });
});

/**
 * A conversation enters the cache when it is used after its start: a burst of conversations that are started and
 * never continued leaves the conversations in use cached, and the active-conversations gauge still counts them.
 */
describe('conversations only started', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.conversations.cache-size': 2 });
  const read = async (conversationId: string) => assert.equal((await api.get(`/agents/${conversationId}`)).status, 200);
  const active = async () => {
    const metrics = await api.get('/q/metrics');
    const line = metrics.text.split('\n').find((text: string) => text.startsWith('svc_conversations_active '));
    return Number(line?.split(' ').at(-1));
  };

  it('are not cached until used again, and take no place from the conversations in use', async () => {
    const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
    const inUse = (await startConversation(api, agentId)).conversationId as string;
    assert.equal(await loadsDuring(api, () => read(inUse)), 1, 'the first use after the start reads it once');
    assert.equal(await loadsDuring(api, () => read(inUse)), 0, 'then it is cached');
    const activeBefore = await active();

    const started: string[] = [];
    for (let n = 0; n < 5; n++) started.push((await startConversation(api, agentId)).conversationId as string);
    assert.equal(await loadsDuring(api, () => read(inUse)), 0, 'five starts into a cache of two: still cached');
    assert.equal(await active(), activeBefore + 5, 'started conversations count as active');

    const answer = await api.post(`/agents/${started[0]}?returnCurrentStepOnly=false`, { json: { input: 'hello' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.json.conversationOutputs.length, 2, 'continued from its start step, read from the store');
    assert.equal(await active(), activeBefore + 5, 'counted once when continued');
    assert.equal((await api.post(`/agents/${started[0]}/endConversation`)).status, 200);
    assert.equal(await active(), activeBefore + 4, 'an ended conversation is not active');
  });
});
