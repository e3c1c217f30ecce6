import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createResource, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { serverOfBlock } from './support/server.ts';

/** The tool-history endpoints (`/llm/tools`, legacy `/langchain/tools`): costs, cache, TTLs, rate limits, history. */

describe('LLM tool history', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.tools.rate-limit-per-minute': 50 });
  let fake: FakeProvider;
  let conversationId: string;

  const say = (input: string) => sendMessage(api, conversationId, input);
  const calculatorCalls = (...expressions: string[]) => ({
    toolCalls: expressions.map((expression) => ({ name: 'calculator', args: { expression } })),
  });
  const assertProblem = (answer: { status: number; headers: Headers; json: any }, status: number, detail: RegExp) => {
    assert.equal(answer.status, status);
    assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.match(answer.json.detail, detail);
  };

  before(async () => {
    fake = await startFakeOpenAi();
    const llmUri = await createResource(api, '/langchainstore/langchains', {
      tasks: [
        {
          id: 'agent',
          type: 'openai',
          actions: ['*'],
          enableBuiltInTools: true,
          retry: { maxAttempts: 1 },
          parameters: {
            apiKey: 'sk-tools-test',
            baseUrl: `${fake.url}/v1`,
            modelName: 'gpt-4o-mini',
            systemMessage: 'Greet the user.',
          },
        },
      ],
    });
    const agentId = await deployAgent(api, { extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }] });
    fake.reply({ text: 'Welcome.' });
    const started = await startConversation(api, agentId);
    assert.deepEqual(
      started.conversationOutputs[0].output,
      ['Welcome.'],
      'on the start the system message is the request',
    );
    conversationId = started.conversationId;
  });
  after(async () => {
    await fake?.close();
  });

  it('starts with no costs and the default rate limit from the settings', async () => {
    await api.post('/llm/tools/costs/reset');
    const costs = await api.get('/llm/tools/costs');
    assert.equal(costs.status, 200);
    assert.deepEqual(costs.json, {
      totalCost: 0,
      summary: { toolCalls: 0, modelCalls: 0, conversations: 0, tools: {}, models: {} },
    });
    const limit = await api.get('/llm/tools/ratelimit/calculator');
    assert.deepEqual(limit.json, { tool: 'calculator', limit: 50, remaining: 50, resetTimeMs: 0 });
  });

  it('exhausts a rate limit, tells the model, and resets it', async () => {
    const set = await api.put('/llm/tools/ratelimit/calculator', { json: { limit: 1 } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json, { tool: 'calculator', limit: 1, remaining: 1, resetTimeMs: 0 });

    fake.reply(calculatorCalls('1 + 1'), { text: 'Two.' }, calculatorCalls('2 + 2'), { text: 'No idea.' });
    assert.deepEqual((await say('add')).conversationOutputs[0].output, ['Two.']);
    assert.deepEqual((await say('add more')).conversationOutputs[0].output, ['No idea.']);
    const exhausted = (await api.get('/llm/tools/ratelimit/calculator')).json;
    assert.equal(exhausted.remaining, 0);
    assert.ok(exhausted.resetTimeMs > 0);
    assert.match(JSON.stringify(fake.requests.at(-1)!.body), /Rate limit exceeded for tool 'calculator'/);

    const history = (await api.get(`/llm/tools/history/${conversationId}`)).json;
    assert.deepEqual(
      history.map((call: any) => [call.tool, call.arguments.expression, call.result, call.rateLimited]),
      [
        ['calculator', '1 + 1', '2', false],
        ['calculator', '2 + 2', "Error: Rate limit exceeded for tool 'calculator'; try again later.", true],
      ],
    );

    const reset = await api.post('/llm/tools/ratelimit/calculator/reset');
    assert.equal(reset.status, 200);
    assert.equal(reset.json.remaining, 1);
    await api.put('/llm/tools/ratelimit/calculator', { json: { limit: 100 } });
  });

  it('caches results per tool, reports statistics, changes TTLs and clears', async () => {
    fake.reply(calculatorCalls('1 + 1'), { text: 'Still two.' });
    await say('again');
    assert.equal(
      (await api.get(`/llm/tools/history/${conversationId}`)).json.at(-1).cached,
      true,
      'the same arguments hit the cache',
    );

    const stats = (await api.get('/llm/tools/cache/stats')).json;
    assert.equal(stats.entriesByTool.calculator, 1);
    assert.ok(stats.hits >= 1);
    assert.ok(stats.hitRate > 0 && stats.hitRate <= 1);

    assert.deepEqual((await api.get('/llm/tools/cache/ttl/calculator')).json, {
      tool: 'calculator',
      ttlSeconds: 604800,
      overridden: false,
    });
    assert.deepEqual((await api.get('/llm/tools/cache/ttl/datetime')).json, {
      tool: 'datetime',
      ttlSeconds: 60,
      overridden: false,
    });
    const changed = await api.put('/llm/tools/cache/ttl/calculator', { json: { ttlSeconds: 0 } });
    assert.deepEqual(changed.json, { tool: 'calculator', ttlSeconds: 0, overridden: true });
    assert.equal(
      (await api.get('/llm/tools/cache/stats')).json.entriesByTool.calculator,
      undefined,
      'a new TTL drops the entries of the tool',
    );

    fake.reply(calculatorCalls('1 + 1'), { text: 'Fresh two.' });
    await say('once more');
    assert.equal(
      (await api.get(`/llm/tools/history/${conversationId}`)).json.at(-1).cached,
      false,
      'TTL 0 = not cached',
    );

    await api.put('/llm/tools/cache/ttl/calculator', { json: { ttlSeconds: 600 } });
    fake.reply(calculatorCalls('3 * 3'), { text: 'Nine.' });
    await say('multiply');
    assert.equal((await api.get('/llm/tools/cache/stats')).json.size, 1);
    const cleared = await api.delete('/llm/tools/cache');
    assert.deepEqual(cleared.json, { message: 'Cache cleared successfully' });
    assert.equal((await api.get('/llm/tools/cache/stats')).json.size, 0);
  });

  it('tracks costs per tool, model and conversation, and resets them', async () => {
    const costs = (await api.get('/llm/tools/costs')).json;
    assert.equal(costs.summary.tools.calculator.calls, 5);
    assert.ok(costs.summary.models['openai:gpt-4o-mini'].calls >= 8);
    assert.ok(costs.totalCost > 0, 'gpt-4o-mini tokens have a price');
    assert.deepEqual((await api.get('/llm/tools/costs/tool/calculator')).json, {
      tool: 'calculator',
      calls: 5,
      totalCost: 0,
      averageCost: 0,
    });
    const conversation = (await api.get(`/llm/tools/costs/conversation/${conversationId}`)).json;
    assert.equal(conversation.toolCalls, 5);
    assert.equal(conversation.inputTokens, 11 * conversation.modelCalls);
    assert.equal((await api.get('/llm/tools/costs/conversation/0123456789abcdef01234567')).json.totalCost, 0);

    assert.equal((await api.post('/llm/tools/costs/reset')).status, 200);
    assert.equal((await api.get('/llm/tools/costs')).json.totalCost, 0);
    assert.equal(
      (await api.get('/langchain/tools/costs')).json.summary.toolCalls,
      0,
      'the legacy prefix reaches the same endpoint',
    );
  });

  it('answers 404 for an unknown tool and 400 for a bad body', async () => {
    assertProblem(await api.get('/llm/tools/cache/ttl/teleporter'), 404, /No tool named 'teleporter'/);
    assertProblem(await api.put('/llm/tools/cache/ttl/teleporter', { json: { ttlSeconds: 5 } }), 404, /teleporter/);
    assertProblem(await api.get('/llm/tools/ratelimit/teleporter'), 404, /teleporter/);
    assertProblem(await api.post('/llm/tools/ratelimit/teleporter/reset'), 404, /teleporter/);
    assertProblem(await api.get('/llm/tools/costs/tool/teleporter'), 404, /teleporter/);
    assert.equal((await api.put('/llm/tools/ratelimit/calculator', { json: { limit: 0 } })).status, 400);
    assert.equal(
      (await api.put('/llm/tools/cache/ttl/calculator', { json: { ttlSeconds: 5, extra: true } })).status,
      400,
    );
  });
});
