import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  contextAction,
  createResource,
  deployAgent,
  rulesByContext,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { closedPort } from './support/http.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * A turn that fails tells the user why (issue 14, item 6), black-box: the reason (task and cause, never a secret)
 * is in the failed step's data and output, in the response while the conversation is in ERROR, and in the turn's
 * server-sent events.
 */

const MASTER_KEY = 'turn-errors test master key 6b1f0c';
const URL_PASSWORD = 'url-password-5e4d3c2b1a';
const HEADER_TOKEN = 'header-token-0a9b8c7d6e';
const LITERAL_TOKEN = 'literal-query-token-7731';
const LITERAL_PASSWORD = 'literal-password-4412';
const API_KEY = 'sk-test-SECRET-key-turn-errors-0123';

function stepEntry(answer: any, key: string): unknown {
  return answer.conversationSteps.at(-1).conversationStep.find((entry: { key: string }) => entry.key === key)?.value;
}

/** The events of a server-sent event stream, in order, with their data parsed. */
function events(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event =
        lines
          .find((line) => line.startsWith('event:'))
          ?.slice('event:'.length)
          .trim() ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trimStart())
        .join('\n');
      return { event, data: data === '' ? undefined : JSON.parse(data) };
    });
}

describe('a failed turn says why', () => {
  const block = serverOfBlock('sqlite', { 'svc.vault.master-key': MASTER_KEY });
  const { api } = block;
  let llm: FakeProvider;
  let agentId: string;
  let port: number;

  before(async () => {
    llm = await startFakeOpenAi();
    port = await closedPort();
    for (const [name, value] of [
      ['urlPassword', URL_PASSWORD],
      ['headerToken', HEADER_TOKEN],
    ] as const) {
      const stored = await api.put(`/secretstore/secrets/default/${name}`, { json: { value } });
      assert.equal(stored.status, 200, stored.text);
    }
    const httpCalls = {
      targetServerUrl: `http://127.0.0.1:${port}/`,
      httpCalls: [
        { name: 'weather', actions: ['weather'], request: { path: `http://127.0.0.1:${port}/weather` } },
        {
          name: 'leaky',
          actions: ['leaky'],
          request: {
            path: `http://admin:\${vault:urlPassword}@127.0.0.1:${port}/x?api_key=${LITERAL_TOKEN}`,
            headers: { Authorization: 'Bearer ${vault:headerToken}' },
          },
        },
        {
          name: 'invalid',
          actions: ['invalid'],
          request: {
            path: `http://admin:${LITERAL_PASSWORD}@bad host.example/x?token=${LITERAL_TOKEN}&pw=\${vault:urlPassword}`,
            headers: { Authorization: 'Bearer ${vault:headerToken}' },
          },
        },
      ],
    };
    const llmTasks = {
      tasks: [
        {
          id: 'chat',
          type: 'openai',
          actions: ['chat'],
          retry: { maxAttempts: 1 },
          parameters: { apiKey: API_KEY, baseUrl: `${llm.url}/v1`, modelName: 'gpt-4o-mini', addToOutput: 'true' },
        },
      ],
    };
    const create = (path: string, body: unknown) => createResource(api, path, body);
    agentId = await deployAgent(api, {
      extensions: [
        {
          type: 'svc://ai.svc.behavior',
          config: {
            uri: await create('/behaviorstore/behaviorsets', rulesByContext(['weather', 'leaky', 'invalid', 'chat'])),
          },
        },
        { type: 'svc://ai.svc.httpcalls', config: { uri: await create('/httpcallsstore/httpcalls', httpCalls) } },
        { type: 'svc://ai.svc.llm', config: { uri: await create('/llmstore/llms', llmTasks) } },
      ],
    });
  });
  after(async () => {
    await llm.close();
  });

  const start = async () => (await startConversation(api, agentId)).conversationId as string;
  const say = (conversationId: string, action: string, query = '') =>
    sendMessage(api, conversationId, 'hello', { context: contextAction(action), query });

  it('an HTTP call to a port nothing listens on: the reason names the task, the call and the target', async () => {
    const conversationId = await start();
    const answer = await say(conversationId, 'weather');
    assert.equal(answer.conversationState, 'ERROR');
    const reason = answer.error;
    assert.equal(
      reason,
      `ai.svc.httpcalls: HTTP call 'weather' failed: the connection was refused (127.0.0.1:${port})`,
    );
    assert.equal(answer.conversationOutputs.at(-1).error, reason, 'the step output carries it');
    assert.equal(stepEntry(answer, 'error'), reason, 'the step data carries it (also when not detailed)');

    const read = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
    assert.equal(read.json.error, reason, 'reading the conversation shows it too');
  });

  it('the next turn that works clears the response field; the failed step keeps its reason', async () => {
    const conversationId = await start();
    await say(conversationId, 'weather');
    const next = await say(conversationId, 'nothing', '?returnCurrentStepOnly=false');
    assert.equal(next.conversationState, 'READY');
    assert.equal(next.error, undefined);
    assert.match(String(next.conversationOutputs.at(-2).error), /HTTP call 'weather' failed/);
    assert.equal(next.conversationOutputs.at(-1).error, undefined);
  });

  it('an LLM provider answering 500: the reason names the provider, model and status, without the key', async () => {
    const conversationId = await start();
    llm.reply({ status: 500, message: `upstream exploded (key ${API_KEY})` });
    const answer = await say(conversationId, 'chat', '?returnDetailed=true');
    assert.equal(answer.conversationState, 'ERROR');
    assert.match(answer.error, /^ai\.svc\.llm: The openai model 'gpt-4o-mini' failed \(status 500\) after 1 attempt/);
    assert.ok(!answer.error.includes(API_KEY), answer.error);
    assert.equal(stepEntry(answer, 'error'), answer.error);
  });

  it('a secret in the failing URL or its headers is never in the reason', async () => {
    const conversationId = await start();
    for (const action of ['leaky', 'invalid']) {
      const answer = await say(conversationId, action, '?returnDetailed=true');
      assert.equal(answer.conversationState, 'ERROR', action);
      assert.match(answer.error, new RegExp(`HTTP call '${action}' failed`));
      for (const secret of [URL_PASSWORD, HEADER_TOKEN, LITERAL_TOKEN, LITERAL_PASSWORD])
        assert.ok(!answer.error.includes(secret), `${action}: ${answer.error}`);
    }
    const detailed = await api.get(`/agents/${conversationId}?returnDetailed=true&returnCurrentStepOnly=false`);
    for (const secret of [URL_PASSWORD, HEADER_TOKEN, LITERAL_PASSWORD])
      assert.ok(!detailed.text.includes(secret), `${secret} is nowhere in the conversation`);
    const log = block.server.logLines.join('\n');
    for (const secret of [URL_PASSWORD, HEADER_TOKEN, LITERAL_TOKEN, LITERAL_PASSWORD])
      assert.ok(!log.includes(secret), `${secret} is not in the server log`);
  });

  it('the stream tells the reason as a task_failed event, then done with the conversation in ERROR', async () => {
    const conversationId = await start();
    const answer = await api.post(`/agents/${conversationId}/stream`, {
      json: { input: 'hello', context: contextAction('weather') },
    });
    assert.equal(answer.status, 200, answer.text);
    const stream = events(answer.text);
    const failed = stream.find((event) => event.event === 'task_failed');
    assert.ok(failed, answer.text);
    assert.equal(failed.data.task, 'ai.svc.httpcalls');
    assert.match(failed.data.reason, /HTTP call 'weather' failed: the connection was refused/);
    const done = stream.at(-1)!;
    assert.equal(done.event, 'done');
    assert.equal(done.data.conversationState, 'ERROR');
    assert.equal(done.data.error, failed.data.reason);
  });
});
