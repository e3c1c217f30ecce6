import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  chatRules,
  createAgent,
  createResource,
  deploy,
  sendMessage,
  startConversation,
  welcomeOutputs,
} from './support/agents.ts';
import {
  startFakeAnthropic,
  startFakeGemini,
  startFakeOllama,
  startFakeOpenAi,
  sentConversation,
  type FakeProvider,
  type Protocol,
} from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { serverOfBlock, type StoreType, type TestServer } from './support/server.ts';

/**
 * LLM tasks through the REST API against loopback fake providers speaking each wire protocol (reference §9):
 * messages sent, replies in the output, credentials only in the provider's own header, tools, retries, jlama.
 */

const API_KEY = 'sk-test-SECRET-key-0123456789abcdef';

type Api = ReturnType<typeof client>;

interface ProviderCase {
  readonly type: string;
  readonly protocol: Protocol;
  readonly start: () => Promise<FakeProvider>;
  readonly baseUrl: (url: string) => string;
  readonly model: Record<string, string>;
  readonly keyHeader: readonly [name: string, value: string];
}

const providerCases: readonly ProviderCase[] = [
  {
    type: 'openai',
    protocol: 'openai',
    start: startFakeOpenAi,
    baseUrl: (url) => `${url}/v1`,
    model: { modelName: 'gpt-4o-mini' },
    keyHeader: ['authorization', `Bearer ${API_KEY}`],
  },
  {
    type: 'anthropic',
    protocol: 'anthropic',
    start: startFakeAnthropic,
    baseUrl: (url) => `${url}/v1`,
    model: { modelName: 'claude-3-5-haiku-latest' },
    keyHeader: ['x-api-key', API_KEY],
  },
  {
    type: 'gemini',
    protocol: 'gemini',
    start: startFakeGemini,
    baseUrl: (url) => `${url}/v1beta`,
    model: { modelName: 'gemini-2.0-flash' },
    keyHeader: ['x-goog-api-key', API_KEY],
  },
  {
    type: 'ollama',
    protocol: 'ollama',
    start: startFakeOllama,
    baseUrl: (url) => url,
    model: { model: 'llama3.2' },
    keyHeader: ['authorization', `Bearer ${API_KEY}`],
  },
];

const create = createResource;

/** behavior (chat on every message) -> LLM -> output (welcome on start). */
async function llmAgent(
  api: Api,
  task: Record<string, unknown>,
  options: { store?: string; extensionType?: string } = {},
): Promise<string> {
  const llmUri = await create(api, options.store ?? '/langchainstore/langchains', { tasks: [task] });
  const rulesUri = await create(api, '/behaviorstore/behaviorsets', chatRules);
  return createAgent(api, {
    outputSet: welcomeOutputs,
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: options.extensionType ?? 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
  });
}

async function start(api: Api, agentId: string): Promise<string> {
  return (await startConversation(api, agentId, { query: '?userId=ada' })).conversationId;
}

const say = (api: Api, conversationId: string, input: string) => sendMessage(api, conversationId, input);

function stepData(conversation: any, key: string): unknown {
  return conversation.conversationSteps.at(-1).conversationStep.find((entry: { key: string }) => entry.key === key)
    ?.value;
}

function chatTask(
  provider: ProviderCase,
  fake: FakeProvider,
  parameters: Record<string, string> = {},
): Record<string, unknown> {
  return {
    id: 'chat',
    type: provider.type,
    actions: ['chat'],
    responseMetadataObjectName: 'meta',
    retry: { maxAttempts: 1 },
    parameters: {
      apiKey: API_KEY,
      baseUrl: provider.baseUrl(fake.url),
      ...provider.model,
      systemMessage: 'You help {userInfo.userId}.',
      addToOutput: 'true',
      ...parameters,
    },
  };
}

async function assertNoSecretAnywhere(api: Api, server: TestServer, conversationId: string): Promise<void> {
  const detailed = await api.get(`/agents/${conversationId}?returnDetailed=true&returnCurrentStepOnly=false`);
  assert.equal(detailed.status, 200);
  assert.ok(!detailed.text.includes(API_KEY), 'the API key is not in the conversation memory');
  assert.ok(!server.logLines.join('\n').includes(API_KEY), 'the API key is not in the logs');
}

function withServer(store: StoreType, body: (server: TestServer, api: Api) => void): void {
  const block = serverOfBlock(store);
  body(new Proxy({} as TestServer, { get: (_, name) => Reflect.get(block.server, name) }), block.api);
}

describe('LLM tasks on sqlite', () => {
  withServer('sqlite', (server, api) => {
    for (const provider of providerCases) {
      describe(provider.type, () => {
        let fake: FakeProvider;
        before(async () => {
          fake = await provider.start();
        });
        after(async () => {
          await fake?.close();
        });

        it('sends the system message and the history, adds the reply to the output, keeps the key out of memory and logs', async () => {
          fake.reset();
          const agentId = await llmAgent(api, chatTask(provider, fake));
          await deploy(api, agentId);
          const id = await start(api, agentId);
          assert.equal(fake.requests.length, 0, 'the conversation start does not call the model');

          fake.reply({ text: 'Hello Ada, how can I help?' }, { text: 'Paris is the capital.' });
          const first = await say(api, id, 'Hello');
          assert.equal(first.conversationState, 'READY');
          assert.deepEqual(first.conversationOutputs[0].output, ['Hello Ada, how can I help?']);
          const second = await say(api, id, 'What is the capital of France?');
          assert.deepEqual(second.conversationOutputs[0].output, ['Paris is the capital.']);

          assert.equal(fake.requests.length, 2);
          const [name, value] = provider.keyHeader;
          assert.equal(fake.requests[1]!.headers[name], value, `the key travels in ${name}`);
          const sent = sentConversation(provider.protocol, fake.requests[1]!);
          assert.equal(sent.system, 'You help ada.');
          assert.deepEqual(sent.messages, [
            { role: 'assistant', text: 'Welcome!' },
            { role: 'user', text: 'Hello' },
            { role: 'assistant', text: 'Hello Ada, how can I help?' },
            { role: 'user', text: 'What is the capital of France?' },
          ]);

          const detailed = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
          assert.equal(stepData(detailed, `langchain:${provider.type}:chat`), 'Paris is the capital.');
          assert.equal(stepData(detailed, `output:text:langchain:${provider.type}`), 'Paris is the capital.');
          const metadata = stepData(detailed, 'langchain:meta') as Record<string, any>;
          assert.equal(metadata.finishReason, 'stop');
          assert.deepEqual(metadata.tokenUsage, { inputTokens: 11, outputTokens: 7, totalTokens: 18 });
          assert.deepEqual(detailed.conversationOutputs[0].langchain.meta, metadata);
          await assertNoSecretAnywhere(api, server, id);
        });

        it('sends only the system message and the current input when sendConversation is false', async () => {
          fake.reset();
          const agentId = await llmAgent(
            api,
            chatTask(provider, fake, { sendConversation: 'false', addToOutput: 'false' }),
          );
          await deploy(api, agentId);
          const id = await start(api, agentId);
          fake.reply({ text: 'one' }, { text: 'two' });
          const first = await say(api, id, 'First question');
          assert.equal(
            first.conversationOutputs[0].output,
            undefined,
            'addToOutput false keeps the reply out of the output',
          );
          await say(api, id, 'Second question');
          const sent = sentConversation(provider.protocol, fake.requests[1]!);
          assert.equal(sent.system, 'You help ada.');
          assert.deepEqual(sent.messages, [{ role: 'user', text: 'Second question' }]);
        });

        it('runs a calculator tool call round trip in exactly two provider calls', async () => {
          fake.reset();
          const agentId = await llmAgent(api, {
            ...chatTask(provider, fake, { addToOutput: '' }),
            enableBuiltInTools: true,
            builtInToolsWhitelist: ['calculator'],
          });
          await deploy(api, agentId);
          const id = await start(api, agentId);
          const expression = `(17 + 4) * 2 + ${providerCases.indexOf(provider)} - ${providerCases.indexOf(provider)}`; // distinct per provider: no cache hit
          fake.reply({ toolCalls: [{ name: 'calculator', args: { expression } }] }, { text: 'It is 42.' });
          const answer = await say(api, id, 'What is (17 + 4) * 2?');
          assert.deepEqual(
            answer.conversationOutputs[0].output,
            ['It is 42.'],
            'agent mode adds the answer to the output by default',
          );
          assert.equal(fake.requests.length, 2);
          assert.match(fake.requests[1]!.rawBody, /42/, 'the tool result goes back to the model');
          const tools = JSON.stringify(fake.requests[0]!.body);
          assert.match(tools, /calculator/);
          assert.doesNotMatch(tools, /webscraper/, 'the whitelist filters the built-in tools');

          const detailed = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
          assert.deepEqual(stepData(detailed, `langchain:trace:${provider.type}:chat`), [
            { tool: 'calculator', arguments: { expression }, result: '42', cached: false },
          ]);
          const history = await api.get(`/llm/tools/history/${id}`);
          assert.equal(history.status, 200);
          assert.equal(history.json.length, 1);
          assert.equal(history.json[0].tool, 'calculator');
          assert.equal(history.json[0].result, '42');
          const costs = (await api.get(`/llm/tools/costs/conversation/${id}`)).json;
          assert.equal(costs.toolCalls, 1);
          assert.equal(costs.modelCalls, 2);
          await assertNoSecretAnywhere(api, server, id);
        });
      });
    }

    describe('failures and other servers', () => {
      let fake: FakeProvider;
      before(async () => {
        fake = await startFakeOpenAi();
      });
      after(async () => {
        await fake?.close();
      });
      const openai = providerCases[0]!;

      it('reaches an OpenAI-compatible server through baseUrl (chat completions), also through the upstream names', async () => {
        fake.reset();
        const agentId = await llmAgent(
          api,
          { ...chatTask(openai, fake, { modelName: 'deepseek-chat', systemMessage: '' }) },
          { store: '/llmstore/llms', extensionType: 'svc://ai.svc.langchain' },
        );
        await deploy(api, agentId);
        const id = await start(api, agentId);
        fake.reply({ text: 'compatible' });
        assert.deepEqual((await say(api, id, 'hi')).conversationOutputs[0].output, ['compatible']);
        assert.equal(fake.requests[0]!.path, '/v1/chat/completions');
        assert.equal(fake.requests[0]!.body.model, 'deepseek-chat');
        assert.equal(
          sentConversation('openai', fake.requests[0]!).system,
          undefined,
          'a blank system message is left out',
        );
      });

      it('retries a failing provider, then ends the turn in ERROR with a clear message and no key', async () => {
        fake.reset();
        const agentId = await llmAgent(api, {
          ...chatTask(openai, fake),
          retry: { maxAttempts: 3, backoffDelayMs: 0 },
        });
        await deploy(api, agentId);
        const id = await start(api, agentId);
        const echo = `upstream exploded (key ${API_KEY})`;
        fake.reply({ status: 500, message: echo }, { status: 503, message: echo }, { status: 500, message: echo });
        const failed = await say(api, id, 'Hello');
        assert.equal(failed.conversationState, 'ERROR');
        assert.equal(fake.requests.length, 3, 'three attempts');
        const logged = server.logLines.find((line) =>
          line.includes("The openai model 'gpt-4o-mini' failed (status 500) after 3 attempts"),
        );
        assert.ok(logged, 'the failure is logged with provider, model, status and attempts');
        assert.ok(logged.includes('<REDACTED>'), 'a key echoed by the provider is masked');
        await assertNoSecretAnywhere(api, server, id);

        fake.reply({ text: 'back again' });
        const next = await say(api, id, 'Hello again');
        assert.equal(next.conversationState, 'READY');
        assert.deepEqual(next.conversationOutputs[0].output, ['back again']);
      });

      it('does not retry a client error (401)', async () => {
        fake.reset();
        const agentId = await llmAgent(api, {
          ...chatTask(openai, fake),
          retry: { maxAttempts: 3, backoffDelayMs: 0 },
        });
        await deploy(api, agentId);
        const id = await start(api, agentId);
        fake.reply({ status: 401, message: 'Incorrect API key provided' });
        assert.equal((await say(api, id, 'Hello')).conversationState, 'ERROR');
        assert.equal(fake.requests.length, 1);
      });

      it('a jlama task fails the deployment with the reason and suggests ollama', async () => {
        const llmUri = await create(api, '/langchainstore/langchains', {
          tasks: [
            {
              id: 'local',
              type: 'jlama',
              actions: ['*'],
              parameters: { modelName: 'tjake/Llama-3.2-1B-Instruct-JQ4' },
            },
          ],
        });
        const agentId = await createAgent(api, { extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }] });
        const answer = await api.post(`/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`);
        assert.equal(answer.json.status, 'ERROR');
        assert.match(answer.json.error, /jlama.*in-JVM.*ollama/s);
      });

      it('an unknown provider type and a missing oracle-genai baseUrl fail the deployment', async () => {
        for (const [task, reason] of [
          [{ type: 'telepathy', actions: ['*'] }, /Unknown LLM provider type 'telepathy'/],
          [
            { type: 'oracle-genai', actions: ['*'], parameters: { modelName: 'cohere.command-r' } },
            /oracle-genai provider needs the parameter 'baseUrl'/,
          ],
        ] as const) {
          const llmUri = await create(api, '/langchainstore/langchains', { tasks: [task] });
          const agentId = await createAgent(api, {
            extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }],
          });
          const answer = await api.post(
            `/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`,
          );
          assert.equal(answer.json.status, 'ERROR');
          assert.match(answer.json.error, reason);
        }
      });
    });
  });
});

describe('LLM tasks on postgres', () => {
  withServer('postgres', (server, api) => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeOpenAi();
    });
    after(async () => {
      await fake?.close();
    });

    it('answers with the model and sends the history', async () => {
      const openai = providerCases[0]!;
      const agentId = await llmAgent(api, chatTask(openai, fake));
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: 'first' }, { text: 'second' });
      await say(api, id, 'one');
      assert.deepEqual((await say(api, id, 'two')).conversationOutputs[0].output, ['second']);
      assert.deepEqual(
        sentConversation('openai', fake.requests[1]!).messages.map((m) => m.text),
        ['Welcome!', 'one', 'first', 'two'],
      );
      await assertNoSecretAnywhere(api, server, id);
    });
  });
});

describe('LLM tasks with the secrets vault', () => {
  withServer('sqlite', (server, api) => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeOpenAi();
      await server.restart({ 'svc.vault.master-key': 'llm test master key 5d1e8a7c' });
    });
    after(async () => {
      await fake?.close();
    });

    it('reads ${vault:NAME} per call: the value reaches the provider header only', async () => {
      const stored = await api.put('/secretstore/secrets/default/openai-key', { json: { value: API_KEY } });
      assert.ok(stored.status === 200 || stored.status === 201, stored.text);
      const openai = providerCases[0]!;
      const agentId = await llmAgent(api, chatTask(openai, fake, { apiKey: '${vault:openai-key}' }));
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: 'from the vault' });
      assert.deepEqual((await say(api, id, 'hi')).conversationOutputs[0].output, ['from the vault']);
      assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${API_KEY}`);
      await assertNoSecretAnywhere(api, server, id);

      const missing = await llmAgent(api, chatTask(openai, fake, { apiKey: '${vault:no-such-key}' }));
      await deploy(api, missing);
      const other = await start(api, missing);
      assert.equal((await say(api, other, 'hi')).conversationState, 'ERROR');
      assert.ok(
        server.logLines.some(
          (line) =>
            line.includes("parameter 'apiKey' refers to a secret that cannot be read") && line.includes('no-such-key'),
        ),
      );
      assert.equal(fake.requests.length, 1, 'no call without the key');
    });

    it('resolves only the ${vault:…} the configuration wrote: one in the data reaches neither the model nor the answer', async () => {
      const adminPassword = 'admin-db-Pa55word-7c41e9';
      const tenantCode = 'tenant-code-2b8f03';
      for (const [name, value] of [
        ['adminDbPassword', adminPassword],
        ['tenantCode', tenantCode],
      ] as const) {
        const stored = await api.put(`/secretstore/secrets/default/${name}`, { json: { value } });
        assert.ok(stored.status === 200 || stored.status === 201, stored.text);
      }
      fake.reset();
      const agentId = await llmAgent(
        api,
        chatTask(providerCases[0]!, fake, {
          prompt: 'You serve tenant ${vault:tenantCode}. Spell this name letter by letter: {context.name}',
        }),
      );
      await deploy(api, agentId);
      const id = await start(api, agentId);
      // The model does what it is asked: it spells what follows "letter by letter: " (a spelled secret would pass
      // any masking of the plain value).
      const spell = (text: string) => [...text].join(' ');
      fake.reply((request) => {
        const prompt = sentConversation('openai', request).messages.at(-1)!.text;
        return { text: spell(prompt.slice(prompt.indexOf('letter by letter: ') + 'letter by letter: '.length)) };
      });
      const answer = await sendMessage(api, id, 'hi', {
        context: { name: { type: 'string', value: '${vault:adminDbPassword}' } },
      });

      assert.equal(fake.requests.length, 1);
      const sent = fake.requests[0]!;
      assert.ok(!sent.rawBody.includes(adminPassword), 'the secret named in the data never reaches the provider');
      assert.equal(
        sentConversation('openai', sent).messages.at(-1)!.text,
        `You serve tenant ${tenantCode}. Spell this name letter by letter: \${vault:adminDbPassword}`,
        'the configured reference is resolved, the one from the data stays literal text',
      );
      assert.deepEqual(answer.conversationOutputs[0].output, [spell('${vault:adminDbPassword}')]);
      const detailed = await api.get(`/agents/${id}?returnDetailed=true&returnCurrentStepOnly=false`);
      assert.equal(detailed.status, 200);
      for (const secret of [adminPassword, spell(adminPassword), tenantCode])
        assert.ok(!detailed.text.includes(secret), `'${secret}' is not in the conversation`);
    });
  });
});

describe('LLM answers streamed to a client', () => {
  withServer('sqlite', (server, api) => {
    let fake: FakeProvider;
    before(async () => {
      fake = await startFakeOpenAi();
    });
    after(async () => {
      await fake?.close();
    });

    it('POST /agents/<id>/stream sends the answer token by token, then the conversation', async () => {
      const openai = providerCases[0]!;
      const agentId = await llmAgent(api, chatTask(openai, fake));
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: 'Streaming works fine.' });
      const response = await fetch(`${server.url}/agents/${id}/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Stream please' }),
      });
      assert.equal(response.status, 200);
      const events = (await response.text())
        .trim()
        .split('\n\n')
        .map((block) => {
          const lines = block.split('\n');
          return { event: lines[0]!.slice('event: '.length), data: JSON.parse(lines[1]!.slice('data: '.length)) };
        });
      const tokens = events.filter((e) => e.event === 'token').map((e) => e.data.text as string);
      assert.ok(tokens.length > 1, `several token events (${tokens.length})`);
      assert.equal(tokens.join(''), 'Streaming works fine.');
      assert.equal(fake.requests.at(-1)!.body.stream, true, 'the provider was asked to stream');
      const done = events.at(-1)!;
      assert.equal(done.event, 'done');
      assert.deepEqual(done.data.conversationOutputs[0].output, ['Streaming works fine.']);
    });

    it('streamingTimeoutSeconds ends a streamed answer that never comes: the turn fails, the server goes on', async () => {
      const openai = providerCases[0]!;
      const agentId = await llmAgent(api, { ...chatTask(openai, fake), streamingTimeoutSeconds: 1 });
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ hang: true });
      const response = await fetch(`${server.url}/agents/${id}/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Stream please' }),
      });
      assert.equal(response.status, 200);
      await response.text();
      assert.equal(fake.requests.at(-1)!.body.stream, true, 'the provider was asked to stream');
      const conversation = await api.get(`/agents/${id}`);
      assert.equal(conversation.json.conversationState, 'ERROR');
      assert.ok(
        server.logLines.some((line) => line.includes('no answer within 1 s')),
        'the log says the streamed answer timed out',
      );
      fake.reply({ text: 'Back again.' });
      assert.deepEqual(await say(api, id, 'Hello?').then((c) => c.conversationOutputs.at(-1).output), ['Back again.']);
    });
  });
});

/** A loopback fake OpenAI server for the tests of the enclosing describe block. */
function fakeOpenAiForBlock(): () => FakeProvider {
  let fake: FakeProvider | undefined;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(async () => {
    await fake?.close();
  });
  return () => fake!;
}

describe('LLM pre-request and post-response property instructions', () => {
  withServer('sqlite', (_server, api) => {
    const fakeServer = fakeOpenAiForBlock();
    const openai = providerCases[0]!;
    const properties = async (conversationId: string) =>
      (await api.get(`/agents/${conversationId}`)).json.conversationProperties;

    it('pre-request instructions run before the model is called: their properties reach the prompt and the system message', async () => {
      const fake = fakeServer();
      fake.reset();
      const agentId = await llmAgent(api, {
        ...chatTask(openai, fake, {
          systemMessage: 'You help {userInfo.userId} in a {properties.style} way.',
          prompt: 'Tell me about {properties.topic}.',
        }),
        preRequest: {
          propertyInstructions: [
            { name: 'topic', fromObjectPath: 'memory.current.input', scope: 'step' },
            { name: 'style', valueString: 'short', scope: 'conversation' },
          ],
        },
      });
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: 'Rome is old.' });
      const answer = await say(api, id, 'Rome');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Rome is old.']);
      const sent = sentConversation('openai', fake.requests[0]!);
      assert.equal(sent.system, 'You help ada in a short way.');
      assert.deepEqual(sent.messages.at(-1), { role: 'user', text: 'Tell me about Rome.' });
      assert.deepEqual(
        await properties(id),
        { style: { name: 'style', value: 'short', scope: 'conversation' } },
        'the step-scoped topic ended with the turn',
      );
    });

    it('post-response instructions turn a JSON answer into properties, under the task id by default', async () => {
      const fake = fakeServer();
      fake.reset();
      const agentId = await llmAgent(api, {
        ...chatTask(openai, fake, { addToOutput: 'false' }),
        postResponse: {
          propertyInstructions: [
            { name: 'city', fromObjectPath: 'chat.city' },
            { name: 'temperature', fromObjectPath: 'chat.temperature' },
            { name: 'summary', valueString: '{chat.city}: {chat.temperature} degrees' },
          ],
        },
      });
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: '```json\n{"city": "Vienna", "temperature": 21.5}\n```' });
      const answer = await say(api, id, 'Weather in Vienna as JSON, please');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(
        answer.conversationOutputs[0].output,
        undefined,
        'addToOutput false: the JSON is not shown to the user',
      );
      assert.deepEqual(await properties(id), {
        city: { name: 'city', value: 'Vienna', scope: 'conversation' },
        temperature: { name: 'temperature', value: 21.5, scope: 'conversation' },
        summary: { name: 'summary', value: 'Vienna: 21.5 degrees', scope: 'conversation' },
      });
    });

    it('responseObjectName binds the answer under another name; a text answer is bound as text', async () => {
      const fake = fakeServer();
      fake.reset();
      const agentId = await llmAgent(api, {
        ...chatTask(openai, fake),
        responseObjectName: 'reply',
        postResponse: {
          propertyInstructions: [
            { name: 'lastAnswer', fromObjectPath: 'reply' },
            { name: 'underTheId', fromObjectPath: 'chat' },
          ],
        },
      });
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: 'Plain text, no JSON.' });
      const answer = await say(api, id, 'Hello');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Plain text, no JSON.']);
      assert.deepEqual(await properties(id), {
        lastAnswer: { name: 'lastAnswer', value: 'Plain text, no JSON.', scope: 'conversation' },
      });
    });

    it('convertToObject "false" keeps a JSON answer as text', async () => {
      const fake = fakeServer();
      fake.reset();
      const agentId = await llmAgent(api, {
        ...chatTask(openai, fake, { convertToObject: 'false' }),
        postResponse: {
          propertyInstructions: [
            { name: 'raw', fromObjectPath: 'chat' },
            { name: 'field', fromObjectPath: 'chat.a' },
          ],
        },
      });
      await deploy(api, agentId);
      const id = await start(api, agentId);
      fake.reply({ text: '{"a": 1}' });
      await say(api, id, 'Hello');
      assert.deepEqual(await properties(id), { raw: { name: 'raw', value: '{"a": 1}', scope: 'conversation' } });
    });
  });
});
