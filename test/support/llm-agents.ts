import { after, before } from 'node:test';
import type { FakeProvider } from './fake-llm/index.ts';
import { createAgent, createResource, deploy, onEveryMessage, startConversation, welcomeOutputs } from './agents.ts';
import type { client } from './http.ts';

type Api = ReturnType<typeof client>;

/** An OpenAI LLM task `chat` on the action `chat` against a fake provider, answers added to the output. */
export function openAiTask(
  fake: FakeProvider,
  fields: Record<string, unknown> = {},
  parameters: Record<string, string> = {},
): Record<string, unknown> {
  return {
    id: 'chat',
    type: 'openai',
    actions: ['chat'],
    responseMetadataObjectName: 'meta',
    retry: { maxAttempts: 1 },
    parameters: {
      apiKey: 'sk-test',
      baseUrl: `${fake.url}/v1`,
      modelName: 'gpt-4o-mini',
      systemMessage: 'Be brief.',
      addToOutput: 'true',
      ...parameters,
    },
    ...fields,
  };
}

/** Deploys behavior (`chat` on every message) -> the LLM task -> output (welcome), starts a conversation; its id. */
export async function conversationWith(api: Api, llmTask: Record<string, unknown>): Promise<string> {
  const llmUri = await createResource(api, '/llmstore/llms', { tasks: [llmTask] });
  const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('chat'));
  const agentId = await createAgent(api, {
    outputSet: welcomeOutputs,
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
  });
  await deploy(api, agentId);
  return (await startConversation(api, agentId)).conversationId;
}

/** A value of the last step's data in a detailed conversation. */
export function lastStepValue(conversation: any, key: string): unknown {
  return conversation.conversationSteps.at(-1).conversationStep.find((entry: { key: string }) => entry.key === key)
    ?.value;
}

interface Closable {
  close(): Promise<void>;
}

/**
 * Loopback servers of the enclosing describe block (a fake provider, a peer, ...): started before its tests, closed
 * after them; each is read through the returned object's property of the same name.
 */
export function loopbackOfBlock<T extends Record<string, () => Promise<Closable>>>(
  starters: T,
): { readonly [K in keyof T]: Awaited<ReturnType<T[K]>> } {
  const started: Record<string, Closable> = {};
  before(async () => {
    for (const [name, start] of Object.entries(starters)) started[name] = await start();
  });
  after(async () => {
    for (const server of Object.values(started)) await server.close();
  });
  return new Proxy({} as { readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }, {
    get: (_, name) => {
      const server = started[name as string];
      if (!server) throw new Error(`the loopback server '${String(name)}' of this block is not started yet`);
      return server;
    },
  });
}
