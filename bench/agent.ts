import { expectStatus, idFromLocation, type BenchApi } from './api.ts';

export const DICTIONARY_WORDS = 2_000;
export const RULES = 102;

export interface BenchmarkAgentOptions {
  /** Base URL of a loopback HTTP target; adds the HTTP-call step. */
  readonly httpCallTarget?: string;
  /** Base URL of a loopback OpenAI-compatible provider (`.../v1`); adds an LLM step answering `greet`. */
  readonly llmBaseUrl?: string;
}

/** Messages of history the LLM workload sends with each request. */
export const LLM_HISTORY_MESSAGES = 10;

/**
 * The agent every workload talks to, built through the REST API like a user would: parser (a dictionary of
 * 2,000 words plus `hello`, with typo correction) -> behavior rules (102 rules in one first-match group, the one
 * that answers `hello` last, so every message evaluates all of them) -> output (a welcome, and one answer per
 * rule) -> templating. The workloads send `hello`.
 * Returns the agent id (version 1), not yet deployed.
 *
 * With `httpCallTarget`, the same agent also makes one HTTP call per answered `hello` (workload `httpcall-step`):
 * an HTTP-calls step after the rules POSTs a small templated JSON body to `<httpCallTarget>/lookup` and saves the
 * JSON answer; everything else is unchanged, so the difference to `step-throughput` is the call's cost.
 * With `llmBaseUrl`, an `openai` task answers `greet` too (system message, the last 10 messages of history, the
 * model's answer added to the output).
 */
export async function buildBenchmarkAgent(api: BenchApi, options: BenchmarkAgentOptions = {}): Promise<string> {
  const create = async (path: string, body: unknown): Promise<string> => {
    const answer = expectStatus(await api.post(path, body), 201, `POST ${path}`);
    return answer.headers.get('location')!;
  };

  const words = Array.from({ length: DICTIONARY_WORDS }, (_, n) => ({
    word: `word${n}`,
    expressions: `topic${n % RULES}(word${n})`,
  }));
  words.push({ word: 'hello', expressions: 'greeting(hello)' });
  const dictionaryUri = await create('/regulardictionarystore/regulardictionaries', { words });

  const topicRules = Array.from({ length: RULES - 1 }, (_, n) => ({
    name: `Topic ${n}`,
    actions: [`answer_topic_${n}`],
    conditions: [{ type: 'inputmatcher', configs: { expressions: `topic${n}(*)` } }],
  }));
  const greeting = {
    name: 'Greeting',
    actions: ['greet'],
    conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
  };
  const rulesUri = await create('/behaviorstore/behaviorsets', {
    behaviorGroups: [{ name: 'Everything', behaviorRules: [...topicRules, greeting] }],
  });

  const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
  const outputSetUri = await create('/outputstore/outputsets', {
    outputSet: [
      {
        action: 'CONVERSATION_START',
        timesOccurred: 0,
        outputs: [text('Welcome! How can I help?')],
        quickReplies: [{ value: 'Hi', expressions: 'greeting(hi)' }],
      },
      { action: 'greet', timesOccurred: 0, outputs: [text('Hi there, {userInfo.userId}!')] },
      ...topicRules.map((rule, n) => ({
        action: rule.actions[0]!,
        timesOccurred: 0,
        outputs: [text(`About topic ${n}.`)],
      })),
    ],
  });
  const workflowUri = await create('/packagestore/packages', {
    packageExtensions: [
      {
        type: 'svc://ai.svc.parser',
        extensions: {
          dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryUri } }],
          corrections: [{ type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 2 } }],
        },
        config: {},
      },
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      ...(options.httpCallTarget === undefined
        ? []
        : [
            {
              type: 'svc://ai.svc.httpcalls',
              config: { uri: await create('/httpcallsstore/httpcalls', httpCallSet(options.httpCallTarget)) },
            },
          ]),
      ...(options.llmBaseUrl === undefined
        ? []
        : [
            {
              type: 'svc://ai.svc.llm',
              config: { uri: await create('/langchainstore/langchains', llmSet(options.llmBaseUrl)) },
            },
          ]),
      { type: 'svc://ai.svc.output', config: { uri: outputSetUri } },
      { type: 'svc://ai.svc.templating', config: {} },
    ],
  });
  return idFromLocation(await create('/agentstore/agents', { packages: [workflowUri] }));
}

/** One call on the `greet` action: POST a templated JSON body, save the JSON answer. */
function httpCallSet(targetServerUrl: string) {
  return {
    targetServerUrl,
    httpCalls: [
      {
        name: 'lookup',
        actions: ['greet'],
        saveResponse: true,
        responseObjectName: 'lookup',
        request: {
          method: 'POST',
          path: '/lookup',
          contentType: 'application/json',
          body: '{"user":"{userInfo.userId}","input":"{memory.current.input}"}',
        },
      },
    ],
  };
}

function llmSet(baseUrl: string) {
  return {
    tasks: [
      {
        id: 'chat',
        type: 'openai',
        actions: ['greet'],
        retry: { maxAttempts: 1 },
        parameters: {
          apiKey: 'sk-bench',
          baseUrl,
          modelName: 'gpt-bench',
          systemMessage: 'You help {userInfo.userId}.',
          addToOutput: 'true',
          // Steps of history: each gives a user and an assistant message.
          logSizeLimit: String(LLM_HISTORY_MESSAGES / 2),
        },
      },
    ],
  };
}

/** Deploys the agent to production and waits until it is READY. */
export async function deployAgent(api: BenchApi, agentId: string, version = 1): Promise<void> {
  const path = `/administration/production/deploy/${agentId}?version=${version}&autoDeploy=true&waitForCompletion=true`;
  const answer = expectStatus(await api.post(path), 200, 'deploy');
  if (answer.json?.status !== 'READY') throw new Error(`deploy: agent not READY: ${answer.text}`);
}

/** Starts `count` conversations with the deployed agent; their ids, in order. */
export async function startConversations(api: BenchApi, agentId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const answer = expectStatus(await api.post(`/agents/${agentId}/start`), 201, 'start a conversation');
    ids.push(answer.json.conversationId as string);
  }
  return ids;
}

/** Builds and deploys the benchmark agent and starts `conversations` conversations: their message paths. */
export async function agentOn(api: BenchApi, conversations: number, options: BenchmarkAgentOptions = {}) {
  const agentId = await buildBenchmarkAgent(api, options);
  await deployAgent(api, agentId);
  const paths = (await startConversations(api, agentId, conversations)).map((id) => `/agents/${id}`);
  return { agentId, paths };
}
