import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createAgent,
  createResource,
  deploy,
  sendMessage,
  startConversation,
  welcomeOutputs,
} from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Upstream 6.x fields and endpoints (issue 14, item 3): implemented as the original answers them, or refused with
 * a 400 saying the feature is not available; never accepted and ignored.
 */

const pathOf = (location: string | null) => new URL(location!.replace(/^svc:\/\/[^/]+/, 'http://x')).pathname;
const versionOf = (location: string | null) =>
  Number(new URL(location!.replace(/^svc:\/\/[^/]+/, 'http://x')).searchParams.get('version'));

for (const store of storeTypes) {
  describe(`PATCH <store>/<id>?version=n with SET/DELETE instructions (${store})`, () => {
    const { api } = serverOfBlock(store);

    it('edits the words, phrases and regular expressions of a dictionary, as the original does', async () => {
      const path = pathOf(
        await createResource(api, '/regulardictionarystore/regulardictionaries', {
          words: [
            { word: 'hello', expressions: 'greeting(hello)' },
            { word: 'bye', expressions: 'goodbye(bye)' },
          ],
          phrases: [{ phrase: 'good morning', expressions: 'greeting(good_morning)' }],
        }),
      );
      const patched = await api.patch(`${path}?version=1`, {
        json: [
          {
            operation: 'SET',
            document: {
              words: [
                { word: 'hello', expressions: 'greeting(hi)' },
                { word: 'hey', expressions: 'greeting(hey)' },
              ],
              regExs: [{ regEx: '\\d+', expressions: 'number(any)' }],
            },
          },
          { operation: 'DELETE', document: { words: [{ word: 'bye' }], phrases: [{ phrase: 'good morning' }] } },
        ],
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(versionOf(patched.headers.get('location')), 2);
      const read = await api.get(`${path}?version=2`);
      assert.deepEqual(read.json, {
        words: [
          { word: 'hello', expressions: 'greeting(hi)' },
          { word: 'hey', expressions: 'greeting(hey)' },
        ],
        phrases: [],
        regExs: [{ regEx: '\\d+', expressions: 'number(any)' }],
      });
      assert.equal((await api.get(`${path}?version=1`)).json.words.length, 2, 'version 1 is kept');

      const stale = await api.patch(`${path}?version=1`, { json: [{ operation: 'DELETE', document: { words: [] } }] });
      assert.equal(stale.status, 409, stale.text);
    });

    it('replaces the output entry of the same action and occurrence, adds new ones, deletes', async () => {
      const path = pathOf(
        await createResource(api, '/outputstore/outputsets', {
          outputSet: [
            { action: 'greet', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hi' }] }] },
            { action: 'greet', timesOccurred: 1, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Again' }] }] },
          ],
        }),
      );
      const hello = { action: 'greet', outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello' }] }] };
      const bye = {
        action: 'bye',
        timesOccurred: 0,
        outputs: [{ valueAlternatives: [{ type: 'text', text: 'Bye' }] }],
      };
      const patched = await api.patch(`${path}?version=1`, {
        json: [
          { operation: 'SET', document: { outputSet: [hello, bye] } },
          { operation: 'DELETE', document: { outputSet: [{ action: 'greet', timesOccurred: 1 }] } },
        ],
      });
      assert.equal(patched.status, 200, patched.text);
      const read = (await api.get(`${path}?version=2`)).json;
      assert.deepEqual(
        read.outputSet.map((entry: any) => [
          entry.action,
          entry.timesOccurred ?? 0,
          entry.outputs[0].valueAlternatives[0].text,
        ]),
        [
          ['greet', 0, 'Hello'],
          ['bye', 0, 'Bye'],
        ],
      );
    });

    it('answers 400 to bad instructions and to fields a PATCH does not edit, 404 on kinds without PATCH', async () => {
      const path = pathOf(await createResource(api, '/regulardictionarystore/regulardictionaries', { words: [] }));
      const bad = [
        [{ operation: 'MERGE', document: { words: [] } }],
        [{ operation: 'SET' }],
        [{ operation: 'SET', document: { words: [{ expressions: 'no word' }] } }],
        [{ operation: 'SET', document: { language: 'de' } }],
        [],
        { operation: 'SET', document: { words: [] } },
      ];
      for (const body of bad) {
        const answer = await api.patch(`${path}?version=1`, { json: body });
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /problem\+json/);
      }
      const language = await api.patch(`${path}?version=1`, {
        json: [{ operation: 'SET', document: { language: 'de' } }],
      });
      assert.match(language.json.detail, /edits only words, phrases, regExs; 'language' .* needs a PUT/);
      assert.equal((await api.get(`${path}/currentversion`)).json, 1, 'nothing was stored');

      const rules = pathOf(await createResource(api, '/behaviorstore/behaviorsets', { behaviorGroups: [] }));
      const none = await api.patch(`${rules}?version=1`, { json: [{ operation: 'SET', document: {} }] });
      assert.equal(none.status, 404, none.text);
    });
  });
}

describe('upstream 6.x fields of agents and LLM tasks (sqlite)', () => {
  const { api } = serverOfBlock('sqlite');

  it('refuses a field asking for a feature that is not available with a 400 naming it', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      [
        '/langchainstore/langchains',
        { tasks: [{ type: 'openai', actions: ['x'], maxBudgetPerConversation: 1.5 }] },
        /'maxBudgetPerConversation' at \$\.tasks\[0\]\.maxBudgetPerConversation asks for a spending budget per conversation, .*not available/,
      ],
      [
        '/langchainstore/langchains',
        { tasks: [{ type: 'openai', retrievalAugmentor: { type: 'advanced' } }] },
        /a custom retrieval augmentor \(use knowledgeBases\).*not available/,
      ],
      [
        '/langchainstore/langchains',
        { tasks: [{ type: 'openai', enableToolCaching: false }] },
        /switching the tool result cache off \(it is always on here\)/,
      ],
      ['/agentstore/agents', { packages: [], capabilities: [{ skill: 'translation' }] }, /capability registry/],
      [
        '/agentstore/agents',
        { packages: [], userMemoryConfig: { dream: { enabled: true } } },
        /'dream' at \$\.userMemoryConfig\.dream asks for Dream memory consolidation/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const answer = await api.post(path, { json: body });
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
      assert.match(answer.json.detail, message);
    }
  });

  it("accepts the original's default values of those fields (its exports write them) and drops them", async () => {
    const llm = await createResource(api, '/langchainstore/langchains', {
      tasks: [
        {
          type: 'openai',
          actions: ['x'],
          enableCostTracking: true,
          enableToolCaching: true,
          enableRateLimiting: true,
          defaultRateLimit: 100,
          enableParallelExecution: false,
          parallelExecutionTimeoutMs: 30000,
          enableWorkflowRag: false,
          maxToolIterations: 4,
        },
      ],
    });
    const stored = (await api.get(`${pathOf(llm)}?version=1`)).json;
    // enableWorkflowRag is implemented (knowledge bases), so it is kept as written.
    assert.deepEqual(stored, {
      tasks: [{ type: 'openai', actions: ['x'], enableWorkflowRag: false, maxToolIterations: 4 }],
    });
    const agent = await createResource(api, '/agentstore/agents', {
      packages: [],
      capabilities: [],
      enableMemoryTools: false,
      userMemoryConfig: { autoRecallCategories: ['preference', 'fact'], dream: { enabled: false } },
      memoryPolicy: null,
    });
    // enableMemoryTools and userMemoryConfig are implemented (persistent user memory), so they are kept as written.
    assert.deepEqual((await api.get(`${pathOf(agent)}?version=1`)).json, {
      packages: [],
      enableMemoryTools: false,
      userMemoryConfig: {},
    });
  });
});

describe('maxToolIterations bounds the tool loop of an LLM task (sqlite)', () => {
  const { api } = serverOfBlock('sqlite');
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(async () => {
    await fake?.close();
  });

  /** An agent whose LLM task (agent mode, calculator tool) runs on every message. */
  async function toolAgent(task: Record<string, unknown>): Promise<string> {
    const llm = await createResource(api, '/langchainstore/langchains', {
      tasks: [
        {
          id: 'chat',
          type: 'openai',
          actions: ['*'],
          retry: { maxAttempts: 1 },
          enableBuiltInTools: true,
          builtInToolsWhitelist: ['calculator'],
          ...task,
          parameters: {
            apiKey: 'sk-test',
            baseUrl: `${fake.url}/v1`,
            modelName: 'gpt-4o-mini',
            ...(task.parameters as object),
          },
        },
      ],
    });
    const agentId = await createAgent(api, {
      outputSet: welcomeOutputs,
      extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llm } }],
    });
    await deploy(api, agentId);
    return agentId;
  }

  /** A model that asks for the calculator every time. */
  const alwaysAsk = (n: number) =>
    fake.reply(
      ...Array.from({ length: n }, (_, i) => ({
        toolCalls: [{ name: 'calculator', args: { expression: `${i} + 1` } }],
      })),
    );

  for (const [label, task] of [
    ['the task field', { maxToolIterations: 3 }],
    ['the parameter', { parameters: { maxToolIterations: '3' } }],
  ] as const) {
    it(`stops after N model calls when the model keeps asking for a tool (${label})`, async () => {
      fake.reset();
      const agentId = await toolAgent(task);
      const { conversationId } = await startConversation(api, agentId);
      const before = fake.requests.length;
      alwaysAsk(10);
      await sendMessage(api, conversationId, 'Count for ever');
      assert.equal(fake.requests.length - before, 3, 'three model calls, then the loop stops');
      assert.equal(fake.pending, 10 - 3);
    });
  }
});
