import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  chatOnEveryMessage,
  createResource,
  deployAgent,
  sendMessage,
  startConversation,
  welcomeOutputs,
} from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * Every LLM provider sends through the guarded outbound dispatcher: with `svc.security.ssrf-protection.enabled`,
 * a `baseUrl` on a loopback address is refused at connect time (no request reaches it); without it, it answers.
 */

type Api = ReturnType<typeof client>;

/** An agent whose LLM task talks to `baseUrl`; returns a started conversation. */
async function conversationWith(api: Api, baseUrl: string): Promise<string> {
  const llmUri = await createResource(api, '/llmstore/llms', {
    tasks: [
      {
        id: 'chat',
        type: 'openai',
        actions: ['chat'],
        retry: { maxAttempts: 3, backoffDelayMs: 0 },
        parameters: { apiKey: 'sk-test', baseUrl, modelName: 'gpt-4o-mini', addToOutput: 'true' },
      },
    ],
  });
  const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', chatOnEveryMessage);
  const agentId = await deployAgent(api, {
    outputSet: welcomeOutputs,
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
  });
  return (await startConversation(api, agentId)).conversationId as string;
}

describe('LLM providers behind the outbound URL guard', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(async () => {
    await fake?.close();
  });

  /** Says hello to a new conversation whose LLM task has its `baseUrl` on the loopback fake model. */
  const hello = async (api: Api) => {
    fake.reset();
    fake.reply({ text: 'hello from loopback' });
    return sendMessage(api, await conversationWith(api, `${fake.url}/v1`), 'Hello');
  };

  describe('with ssrf-protection on', () => {
    const block = serverOfBlock('sqlite', { 'svc.security.ssrf-protection.enabled': true });

    it('refuses a baseUrl on a loopback address: the turn ends in ERROR, not retried, and nothing reaches it', async () => {
      const answer = await hello(block.api);
      assert.equal(answer.conversationState, 'ERROR');
      assert.equal(fake.requests.length, 0, 'the fake model received no request');
      const logged = block.server.logLines.find((line) => line.includes("The openai model 'gpt-4o-mini' failed"));
      assert.ok(logged, 'the failure is logged');
      assert.match(logged, /refused: it is a loopback address/);
      assert.match(logged, /after 1 attempt\b/, 'a refused target is not retried');
    });
  });

  describe('with ssrf-protection off', () => {
    const block = serverOfBlock('sqlite', { 'svc.security.ssrf-protection.enabled': false });

    it('answers through a baseUrl on a loopback address', async () => {
      const answer = await hello(block.api);
      assert.equal(answer.conversationState, 'READY');
      assert.deepEqual(answer.conversationOutputs.at(-1).output, ['hello from loopback']);
      assert.equal(fake.requests.length, 1);
    });
  });
});
