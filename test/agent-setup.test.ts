import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendMessage, startConversation } from './support/agents.ts';
import { type FakeProvider, sentConversation, startFakeOpenAi } from './support/fake-llm/index.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** `POST /administration/agents/setup`: the original service's 6.x agent wizard (called by its Agent Father). */

const API_KEY = 'sk-setup-test-0123456789';

for (const storeType of storeTypes) {
  describe(`agent setup on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeOpenAi();
    });
    after(async () => {
      await fake?.close();
    });

    const descriptorCount = async () => {
      let count = 0;
      for (const store of ['/agentstore/agents', '/packagestore/packages', '/langchainstore/langchains']) {
        count += (await api.get(`${store}/descriptors?limit=0`)).json.length;
      }
      return count;
    };

    it('creates, names and deploys a working LLM agent; the API key is never answered', async () => {
      const answer = await api.post('/administration/agents/setup', {
        json: {
          agentName: 'Travel Helper',
          systemPrompt: 'You help travellers.',
          provider: 'openai',
          model: 'gpt-4o-mini',
          apiKey: API_KEY,
          baseUrl: `${fake.url}/v1`,
          introMessage: 'Where do you want to go?',
          deploy: true,
          enableQuickReplies: false,
        },
      });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.action, 'setup_complete');
      assert.equal(answer.json.deploymentStatus, 'READY', answer.text);
      assert.equal(answer.json.deployed, true);
      assert.equal(answer.headers.get('location'), answer.json.resources.agentLocation);
      assert.ok(!answer.text.includes(API_KEY), 'the key is not answered');
      const { agentId } = answer.json;
      assert.equal((await api.get(`/descriptorstore/descriptors/${agentId}`)).json.name, 'Travel Helper');

      const started = await startConversation(api, agentId);
      assert.deepEqual(started.conversationOutputs.at(-1).output, ['Where do you want to go?']);
      fake.reset();
      fake.reply({ text: 'Try Lisbon.' });
      const answered = await sendMessage(api, started.conversationId, 'Somewhere warm');
      assert.equal(answered.conversationState, 'READY', JSON.stringify(answered));
      assert.deepEqual(answered.conversationOutputs[0].output, ['Try Lisbon.']);
      assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${API_KEY}`);
      assert.ok(!block.server.logLines.join('\n').includes(API_KEY), 'the key is not logged');
    });

    const openAiAgent = (agentName: string, options: Record<string, unknown>) => ({
      agentName,
      systemPrompt: 'Be brief.',
      provider: 'openai',
      model: 'gpt-4o-mini',
      apiKey: API_KEY,
      baseUrl: `${fake.url}/v1`,
      ...options,
    });

    it('stores the system prompt as literal text: braces and template syntax reach the model unchanged', async () => {
      const systemPrompt =
        'Answer as JSON: {"reply": "..."}; never render {properties.secret}, [[${properties.secret}]], {#if x}y{/if}, {! note !}, {| or |} or \\{.';
      const answer = await api.post('/administration/agents/setup', {
        json: openAiAgent('Braces', { systemPrompt }),
      });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.deploymentStatus, 'READY', answer.text);
      const started = await startConversation(api, answer.json.agentId);
      fake.reset();
      fake.reply({ text: '{"reply": "ok"}' });
      const answered = await sendMessage(api, started.conversationId, 'Hi {there}');
      assert.equal(answered.conversationState, 'READY', JSON.stringify(answered));
      const sent = sentConversation('openai', fake.requests[0]!);
      assert.equal(sent.system, systemPrompt);
      assert.deepEqual(sent.messages.at(-1), { role: 'user', text: 'Hi {there}' });
    });

    it('enableBuiltInTools offers the built-in tools (only the whitelisted ones) and the model uses them', async () => {
      const answer = await api.post('/administration/agents/setup', {
        json: openAiAgent('Tools', { enableBuiltInTools: true, builtInToolsWhitelist: ['calculator'] }),
      });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.deploymentStatus, 'READY', answer.text);
      const started = await startConversation(api, answer.json.agentId);
      fake.reset();
      fake.reply({ toolCalls: [{ name: 'calculator', args: { expression: '6 * 7' } }] }, { text: 'It is 42.' });
      const answered = await sendMessage(api, started.conversationId, 'What is 6 times 7?');
      assert.equal(answered.conversationState, 'READY', JSON.stringify(answered));
      assert.deepEqual(answered.conversationOutputs[0].output, ['It is 42.']);
      const offered = (fake.requests[0]!.body.tools ?? []).map((tool: any) => tool.function?.name);
      assert.deepEqual(offered, ['calculator']);
      assert.match(JSON.stringify(fake.requests[1]!.body.messages), /42/, 'the tool result went back to the model');

      const without = await api.post('/administration/agents/setup', {
        json: openAiAgent('No tools', { enableBuiltInTools: false }),
      });
      const plain = await startConversation(api, without.json.agentId);
      fake.reset();
      fake.reply({ text: 'Plain.' });
      await sendMessage(api, plain.conversationId, 'Hello');
      assert.equal(fake.requests[0]!.body.tools, undefined, 'no tools offered by default');
    });

    it('refuses the options of the original wizard that are not available here, naming them; their defaults pass', async () => {
      const before = await descriptorCount();
      for (const [option, value, feature] of [
        ['enableQuickReplies', true, /quick replies/],
        ['enableSentimentAnalysis', true, /sentiment analysis/],
        ['mcpServerUrls', ['http://127.0.0.1:9/mcp'], /MCP client/],
      ] as const) {
        const answer = await api.post('/administration/agents/setup', {
          json: openAiAgent('Unavailable', { [option]: value }),
        });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json.path, option, answer.text);
        assert.match(answer.json.detail, new RegExp(`'${option}' is not available here`), answer.text);
        assert.match(answer.json.detail, feature, answer.text);
      }
      for (const field of ['vaultKeyName', 'hitlConfig']) {
        const answer = await api.post('/administration/agents/setup', {
          json: openAiAgent('Unknown field', { [field]: 'x' }),
        });
        assert.equal(answer.status, 400, answer.text);
        assert.match(answer.json.detail, new RegExp(field), answer.text);
      }
      assert.equal(await descriptorCount(), before, 'nothing created');
      const defaults = await api.post('/administration/agents/setup', {
        json: openAiAgent('Defaults', {
          enableQuickReplies: false,
          enableSentimentAnalysis: false,
          mcpServerUrls: [],
          deploy: false,
        }),
      });
      assert.equal(defaults.status, 201, defaults.text);
    });

    it('deploy: false creates the agent without deploying it; ollama needs no key', async () => {
      const answer = await api.post('/administration/agents/setup', {
        json: { agentName: 'Local', systemPrompt: 'Be brief.', provider: 'ollama', model: 'llama3.2', deploy: false },
      });
      assert.equal(answer.status, 201, answer.text);
      assert.equal(answer.json.deploymentStatus, 'NOT_DEPLOYED');
      assert.equal(answer.json.deployed, false);
      assert.equal(answer.json.resources.outputLocation, undefined, 'no intro message, no output set');
    });

    it('refuses incomplete requests with a 400 problem and creates nothing', async () => {
      const before = await descriptorCount();
      const complete = { agentName: 'A', systemPrompt: 'P', provider: 'openai', model: 'm', apiKey: API_KEY };
      for (const [body, path] of [
        [{ ...complete, agentName: '' }, 'agentName'],
        [{ ...complete, systemPrompt: '  ' }, 'systemPrompt'],
        [{ ...complete, provider: 'skynet' }, 'provider'],
        [{ ...complete, model: '' }, 'model'],
        [{ ...complete, apiKey: '' }, 'apiKey'],
        [{ ...complete, environment: 'staging' }, 'environment'],
      ] as const) {
        const answer = await api.post('/administration/agents/setup', { json: body });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json.path, path, answer.text);
        assert.ok(!answer.text.includes(API_KEY), answer.text);
      }
      const missing = await api.post('/administration/agents/setup', { json: { systemPrompt: 'P' } });
      assert.equal(missing.status, 400, missing.text);
      assert.equal(await descriptorCount(), before);
    });
  });
}
