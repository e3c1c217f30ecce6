import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFakeOpenAi } from './support/fake-llm/index.ts';
import { conversationWith, loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * LLM providers failing in the ways real ones do (issue 19, item 5), against a loopback server speaking the OpenAI
 * chat-completions wire format: one that never answers, one that answers slowly, one that breaks its answer off
 * midway (whole or streamed). Each turn ends with a clear error and the conversation goes on.
 */
describe('LLM provider faults', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.conversations.turn-timeout-seconds': 3 });
  const servers = loopbackOfBlock({ llm: startFakeOpenAi });

  const say = (conversationId: string, input: string) => api.post(`/agents/${conversationId}`, { json: { input } });

  /** The next message gets the provider's answer: the conversation is usable again. */
  async function answersAgain(conversationId: string): Promise<void> {
    servers.llm.reply({ text: 'Back again.' });
    const answer = await say(conversationId, 'Are you there?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.conversationState, 'READY');
    assert.deepEqual(answer.json.conversationOutputs.at(-1).output, ['Back again.']);
  }

  it('a provider that never answers: its timeout ends the turn in ERROR with the reason', async () => {
    const conversationId = await conversationWith(api, openAiTask(servers.llm, {}, { timeout: '1' }));
    servers.llm.reply({ hang: true });
    const answer = await say(conversationId, 'Hello?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.conversationState, 'ERROR');
    assert.match(answer.json.error, /openai model 'gpt-4o-mini'.*(timed out|no answer within 1 s)/);
    await answersAgain(conversationId);
  });

  it('a provider that never answers and no provider timeout: the turn timeout answers 408, the conversation goes on', async () => {
    const conversationId = await conversationWith(api, openAiTask(servers.llm));
    servers.llm.reply({ hang: true });
    const answer = await say(conversationId, 'Hello?');
    assert.equal(answer.status, 408, answer.text);
    assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.match(answer.json.detail, /longer than 3 s/);
    const state = await api.get(`/agents/${conversationId}`);
    assert.equal(state.json.conversationState, 'EXECUTION_INTERRUPTED');
    await answersAgain(conversationId);
  });

  it('a slow provider is waited for within its timeout', async () => {
    const conversationId = await conversationWith(api, openAiTask(servers.llm, {}, { timeout: '30' }));
    servers.llm.reply({ delayMs: 700, reply: { text: 'Slowly, but here.' } });
    const answer = await say(conversationId, 'Hello?');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.conversationOutputs.at(-1).output, ['Slowly, but here.']);
  });

  it('a provider breaking its answer off midway: the turn ends in ERROR with the reason', async () => {
    const conversationId = await conversationWith(api, openAiTask(servers.llm));
    servers.llm.reply({ breakAfterChunks: 0, reply: { text: 'This answer never arrives whole.' } });
    const answer = await say(conversationId, 'Hello?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.conversationState, 'ERROR');
    assert.match(answer.json.error, /openai model 'gpt-4o-mini' failed \(the connection broke off during the answer\)/);
    await answersAgain(conversationId);
  });

  it('a provider breaking off once is retried when the task allows it', async () => {
    const conversationId = await conversationWith(
      api,
      openAiTask(servers.llm, { retry: { maxAttempts: 2, backoffDelayMs: 1 } }),
    );
    servers.llm.reply({ breakAfterChunks: 0, reply: { text: 'Broken.' } }, { text: 'Second time lucky.' });
    const answer = await say(conversationId, 'Hello?');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.conversationOutputs.at(-1).output, ['Second time lucky.']);
  });

  it('a streamed answer broken off midway: the client gets the tokens so far, then the failure; the conversation goes on', async () => {
    const conversationId = await conversationWith(api, openAiTask(servers.llm));
    servers.llm.reply({ breakAfterChunks: 3, reply: { text: 'One two three four five six.' } });
    const streamed = await api.post(`/agents/${conversationId}/stream`, { json: { input: 'Stream please' } });
    assert.equal(streamed.status, 200, streamed.text);
    const events = streamed.text
      .trim()
      .split('\n\n')
      .map((block) => {
        const [event, data] = block.split('\n');
        return { event: event!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) };
      });
    const tokens = events.filter((event) => event.event === 'token').map((event) => event.data.text);
    assert.deepEqual(tokens, ['One ', 'two '], 'the tokens sent before the break');
    assert.ok(
      events.some((event) => event.event === 'task_failed'),
      streamed.text,
    );
    const done = events.at(-1)!;
    assert.equal(done.event, 'done');
    assert.equal(done.data.conversationState, 'ERROR');
    assert.match(done.data.error, /openai model 'gpt-4o-mini' failed \(the connection broke off during the answer\)/);
    await answersAgain(conversationId);
  });

  it('a streamed answer broken off after some tokens is not retried: the client never gets a second answer after the first', async () => {
    const conversationId = await conversationWith(
      api,
      openAiTask(servers.llm, { retry: { maxAttempts: 3, backoffDelayMs: 1 } }),
    );
    servers.llm.reset();
    servers.llm.reply({ breakAfterChunks: 3, reply: { text: 'One two three four.' } });
    const streamed = await api.post(`/agents/${conversationId}/stream`, { json: { input: 'Stream please' } });
    assert.equal(streamed.status, 200, streamed.text);
    assert.equal(servers.llm.requests.length, 1, 'one provider call');
    assert.match(streamed.text, /"conversationState":"ERROR"/);
    await answersAgain(conversationId);
  });
});
