import assert from 'node:assert/strict';
import { unzipSync } from 'fflate';
import type { client } from './http.ts';

/**
 * One way for black-box tests to set up agents and talk to them through the REST API: create configuration,
 * build and deploy agents, start conversations and send messages, each asserting the status that says it worked.
 */

type Api = ReturnType<typeof client>;

export function idFromLocation(location: string | null): string {
  const match = /\/([0-9a-f]{24})(\?version=\d+)?$/.exec(location ?? '');
  assert.ok(match, `Location ${location} ends in an id`);
  return match[1]!;
}

/** Creates a resource (configuration) and answers its `Location` (`svc://...?version=1`). */
export async function createResource(api: Api, path: string, body: unknown): Promise<string> {
  const answer = await api.post(path, { json: body });
  assert.equal(answer.status, 201, answer.text);
  return answer.headers.get('location')!;
}

export interface AgentOptions {
  /** The extensions of the agent's one workflow. */
  readonly extensions?: unknown[];
  /** An output set, created and referenced by an output extension placed after `extensions`. */
  readonly outputSet?: unknown;
  /** Further workflows after that one, each given by its extensions. */
  readonly moreWorkflows?: unknown[][];
  /** Further fields of the agent document (`description`, `a2aEnabled`, ...). */
  readonly agent?: Record<string, unknown>;
  /** The name in the agent's descriptor. */
  readonly name?: string;
}

/** Builds an agent through the REST API (see `AgentOptions`). Returns the agent id (version 1). */
export async function createAgent(api: Api, options: AgentOptions = {}): Promise<string> {
  const extensions: unknown[] = [...(options.extensions ?? [])];
  if (options.outputSet !== undefined) {
    const outputUri = await createResource(api, '/outputstore/outputsets', options.outputSet);
    extensions.push({ type: 'svc://ai.svc.output', config: { uri: outputUri } });
  }
  const workflows: string[] = [];
  for (const packageExtensions of [extensions, ...(options.moreWorkflows ?? [])]) {
    workflows.push(await createResource(api, '/packagestore/packages', { packageExtensions }));
  }
  const agentId = idFromLocation(
    await createResource(api, '/agentstore/agents', { packages: workflows, ...options.agent }),
  );
  if (options.name !== undefined) {
    const named = await api.patch(`/descriptorstore/descriptors/${agentId}`, {
      json: { operation: 'SET', document: { name: options.name } },
    });
    assert.equal(named.status, 200, named.text);
  }
  return agentId;
}

/** Builds an agent (see `createAgent`) and deploys it to production; answers the agent id. */
export async function deployAgent(api: Api, options: AgentOptions): Promise<string> {
  const agentId = await createAgent(api, options);
  await deploy(api, agentId);
  return agentId;
}

/** Starts a conversation with a deployed agent (201) and answers the response body (`conversationId`, ...). */
export async function startConversation(
  api: Api,
  agentId: string,
  options: { body?: unknown; query?: string } = {},
): Promise<any> {
  const started = await api.post(
    `/agents/${agentId}/start${options.query ?? ''}`,
    options.body === undefined ? {} : { json: options.body },
  );
  assert.equal(started.status, 201, started.text);
  return started.json;
}

/** Sends a message to a conversation (200) and answers the response body. */
export async function sendMessage(
  api: Api,
  conversationId: string,
  input: string,
  options: { context?: Record<string, unknown>; query?: string } = {},
): Promise<any> {
  const body = options.context === undefined ? { input } : { input, context: options.context };
  const answer = await api.post(`/agents/${conversationId}${options.query ?? ''}`, { json: body });
  assert.equal(answer.status, 200, answer.text);
  return answer.json;
}

export async function deploy(
  api: Api,
  agentId: string,
  version = 1,
  environment = 'production',
  autoDeploy = true,
): Promise<void> {
  const answer = await api.post(
    `/administration/${environment}/deploy/${agentId}?version=${version}&autoDeploy=${autoDeploy}&waitForCompletion=true`,
  );
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.status, 'READY', answer.text);
}

/**
 * Makes an agent and every resource it references public (while access levels are enforced, deploying or
 * exporting an agent needs USE on everything it references).
 */
export async function publishAgent(api: Api, agentId: string, version = 1): Promise<void> {
  const pending = [`/agentstore/agents/${agentId}?version=${version}`];
  for (let path = pending.shift(); path !== undefined; path = pending.shift()) {
    const read = await api.get(path);
    assert.equal(read.status, 200, read.text);
    for (const [, referenced] of read.text.matchAll(/svc:\/\/ai\.svc\.[\w.-]+(\/[\w./-]+\?version=\d+)/g)) {
      pending.push(referenced!);
    }
    const published = await api.put(`/descriptorstore/descriptors/${idFromLocation(path)}/visibility`, {
      json: { visibility: 'public' },
    });
    assert.equal(published.status, 200, published.text);
  }
}

/** An output set answering `CONVERSATION_START` with a welcome text. */
export const welcomeOutputs = {
  outputSet: [
    {
      action: 'CONVERSATION_START',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome!' }] }],
      quickReplies: [{ value: 'Hi', expressions: 'greeting(hi)' }],
    },
  ],
};

/** A context entry that makes the output task say `text` (upstream's context-supplied output). */
export function sayContext(text: string) {
  return { output: { type: 'object', value: [{ valueAlternatives: [{ type: 'text', text }] }] } };
}

/** A behavior set whose one rule gives `actions` on every message but the conversation start. */
export function onEveryMessage(...actions: string[]) {
  return {
    behaviorGroups: [
      {
        name: 'Every message',
        behaviorRules: [
          {
            name: 'Every message',
            actions,
            conditions: [
              { type: 'negation', conditions: [{ type: 'actionmatcher', configs: { actions: 'CONVERSATION_START' } }] },
            ],
          },
        ],
      },
    ],
  };
}

/** A behavior set with one rule per action: it fires when the message's context `do` names the action. */
export function rulesByContext(actions: readonly string[]) {
  return {
    behaviorGroups: [
      {
        name: 'By context',
        behaviorRules: actions.map((action) => ({
          name: action,
          actions: [action],
          conditions: [
            { type: 'contextmatcher', configs: { contextKey: 'do', contextType: 'string', string: action } },
          ],
        })),
      },
    ],
  };
}

/** The context of a message that makes `rulesByContext` fire `action`. */
export const contextAction = (action: string) => ({ do: { type: 'string', value: action } });

/** The trigger of the LLM agents in tests: `chat` on every message but the conversation start. */
export const chatRules = onEveryMessage('chat');

/** Deploys an agent that runs the LLM configuration (`{tasks}`, triggered by `chat`) on every message. */
export async function deployLlmAgent(api: Api, llm: { tasks: unknown[] }): Promise<string> {
  return deployAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.behavior',
        config: { uri: await createResource(api, '/behaviorstore/behaviorsets', chatRules) },
      },
      { type: 'svc://ai.svc.llm', config: { uri: await createResource(api, '/llmstore/llms', llm) } },
    ],
  });
}

/**
 * An LLM configuration (for `deployLlmAgent`) whose task `chat` asks the OpenAI-compatible model at `url` (a fake in
 * tests), offering the built-in tools calculator and datetime; every calculator call waits for a person's approval.
 */
export function approvedCalculatorLlm(url: string) {
  return {
    tasks: [
      {
        id: 'chat',
        type: 'openai',
        actions: ['chat'],
        retry: { maxAttempts: 1 },
        enableBuiltInTools: true,
        builtInToolsWhitelist: ['calculator', 'datetime'],
        toolApprovals: ['calculator'],
        parameters: { apiKey: 'sk-test', baseUrl: `${url}/v1`, modelName: 'gpt-4o-mini' },
      },
    ],
  };
}

/**
 * A rule-based agent, deployed: the parser with the dictionary, the rules, the HTTP calls (when given), the output
 * set, then templating.
 */
export async function deployRuleAgent(
  api: Api,
  configuration: { dictionary: unknown; rules: unknown; outputs: unknown; httpCalls?: unknown },
): Promise<string> {
  const uri = (path: string, body: unknown) => createResource(api, path, body);
  const dictionary = await uri('/regulardictionarystore/regulardictionaries', configuration.dictionary);
  return deployAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.parser',
        extensions: {
          dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionary } }],
        },
        config: {},
      },
      { type: 'svc://ai.svc.behavior', config: { uri: await uri('/behaviorstore/behaviorsets', configuration.rules) } },
      ...(configuration.httpCalls === undefined
        ? []
        : [
            {
              type: 'svc://ai.svc.httpcalls',
              config: { uri: await uri('/httpcallsstore/httpcalls', configuration.httpCalls) },
            },
          ]),
      { type: 'svc://ai.svc.output', config: { uri: await uri('/outputstore/outputsets', configuration.outputs) } },
      { type: 'svc://ai.svc.templating', config: {} },
    ],
  });
}

const textOutput = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });

/**
 * A rule-based agent (see `deployRuleAgent`) that greets 'hello' ("Hi!") and approves a 'refund' ("Your refund is
 * approved."), its rule pausing the turn for a person first (PAUSE_CONVERSATION) unless `pauses` is false.
 */
export function refundAgent(pauses = true) {
  return {
    dictionary: {
      words: [
        { word: 'refund', expressions: 'refund(request)' },
        { word: 'hello', expressions: 'greeting(hello)' },
      ],
    },
    rules: {
      behaviorGroups: [
        {
          name: 'G',
          behaviorRules: [
            {
              name: 'Refund',
              actions: pauses ? ['refund_checked', 'PAUSE_CONVERSATION'] : ['refund_checked'],
              conditions: [{ type: 'inputmatcher', configs: { expressions: 'refund(*)' } }],
            },
            {
              name: 'Greet',
              actions: ['greet'],
              conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
            },
          ],
        },
      ],
    },
    outputs: {
      outputSet: [
        { action: 'refund_checked', timesOccurred: 0, outputs: [textOutput('Your refund is approved.')] },
        { action: 'greet', timesOccurred: 0, outputs: [textOutput('Hi!')] },
      ],
    },
  };
}

/** The refund agent (`refundAgent`), pausing on 'refund', deployed; answers its id. */
export const deployRefundAgent = (api: Api) => deployRuleAgent(api, refundAgent());

/**
 * Exports version 1 of `agentId` as a ZIP and imports it again (`strategy=create`) into the server at `baseUrl`:
 * answers the file names in the ZIP and the import's answer (201 asserted).
 */
export async function exportAndImportAgent(
  api: Api,
  baseUrl: string,
  agentId: string,
): Promise<{ entries: string[]; imported: any }> {
  const exported = await api.post(`/backup/export/${agentId}?agentVersion=1`);
  assert.equal(exported.status, 200, exported.text);
  const zip = await (await fetch(`${baseUrl}${exported.headers.get('location')}`)).arrayBuffer();
  const entries = Object.keys(unzipSync(new Uint8Array(zip)));
  const answer = await fetch(`${baseUrl}/backup/import?strategy=create`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip' },
    body: zip,
  });
  const imported = (await answer.json()) as any;
  assert.equal(answer.status, 201, JSON.stringify(imported));
  return { entries, imported };
}
