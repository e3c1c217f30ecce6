import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { deployAgent, startConversation, welcomeOutputs } from './support/agents.ts';
import { controlExtension, controlTask, turnGate } from './support/control-task.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Retries without duplicates: a client whose message got no answer (the instance died right after committing the
 * turn, the connection dropped) sends it again with the same `Idempotency-Key` and gets the stored answer; the
 * turn does not run a second time.
 */

const ctx = (value: string) => ({ type: 'string', value });

for (const storeType of storeTypes) {
  describe(`retried messages on ${storeType}`, () => {
    const block = serverOfBlock(storeType, {}, [controlTask]);
    const { api } = block;
    let agentId: string;
    before(async () => {
      agentId = await deployAgent(api, { extensions: [controlExtension], outputSet: welcomeOutputs });
    });

    const newConversation = async (): Promise<string> => (await startConversation(api, agentId)).conversationId;
    const send = (id: string, body: unknown, key?: string, path = `/agents/${id}`) =>
      api.post(path, { json: body, headers: key === undefined ? {} : { 'idempotency-key': key } });
    const inputs = async (id: string): Promise<string[]> => {
      const all = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(all.status, 200, all.text);
      return all.json.conversationOutputs.slice(1).map((output: { input?: string }) => output.input);
    };

    it('the same key twice makes one step and the same answer, also after later messages', async () => {
      const id = await newConversation();
      const property = { name: 'amount', value: 10, scope: 'conversation' };
      const body = { input: 'pay 10 EUR', context: { property: { type: 'object', value: property } } };
      const first = await send(id, body, 'payment-1');
      assert.equal(first.status, 200, first.text);
      const retried = await send(id, body, 'payment-1');
      assert.equal(retried.status, 200, retried.text);
      assert.deepEqual(retried.json, first.json);
      assert.deepEqual(retried.json.conversationProperties.amount, property);
      assert.deepEqual(await inputs(id), ['pay 10 EUR']);

      const next = { input: 'next', context: { property: { type: 'object', value: { ...property, value: 20 } } } };
      assert.equal((await send(id, next, 'next-1')).status, 200);
      const late = await send(id, body, 'payment-1');
      assert.equal(late.status, 200, late.text);
      assert.deepEqual(late.json, first.json, 'the answer is the conversation as that turn left it');
      assert.deepEqual(await inputs(id), ['pay 10 EUR', 'next']);
    });

    it('a retry after a restart (the answer lost with the old process) still gets the stored answer', async () => {
      const id = await newConversation();
      const first = await send(id, { input: 'book the flight' }, 'flight-7');
      assert.equal(first.status, 200, first.text);
      await block.server.restart();
      const retried = await send(id, { input: 'book the flight' }, 'flight-7');
      assert.equal(retried.status, 200, retried.text);
      assert.deepEqual(retried.json, first.json);
      assert.deepEqual(await inputs(id), ['book the flight']);
    });

    it('two copies sent together make one turn: the second waits and gets the first one`s answer', async () => {
      const id = await newConversation();
      const gate = turnGate();
      const body = { input: 'once', context: gate.context };
      const first = send(id, body, 'together');
      await gate.reached;
      const second = send(id, body, 'together');
      gate.release();
      const [a, b] = await Promise.all([first, second]);
      assert.equal(a.status, 200, a.text);
      assert.equal(b.status, 200, b.text);
      assert.deepEqual(b.json, a.json);
      assert.deepEqual(await inputs(id), ['once']);
    });

    it('the same key with another message is refused with 422 and runs nothing', async () => {
      const id = await newConversation();
      assert.equal((await send(id, { input: 'transfer 10' }, 'k-1')).status, 200);
      for (const other of [{ input: 'transfer 1000' }, { input: 'transfer 10', context: { a: ctx('b') } }]) {
        const refused = await send(id, other, 'k-1');
        assert.equal(refused.status, 422, refused.text);
        assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
        assert.match(refused.json.detail, /Idempotency-Key/);
      }
      assert.deepEqual(await inputs(id), ['transfer 10']);
    });

    it('without a key, or with new keys, every message runs', async () => {
      const id = await newConversation();
      for (const key of [undefined, undefined, 'a', 'b'])
        assert.equal((await send(id, { input: 'same' }, key)).status, 200);
      assert.deepEqual(await inputs(id), ['same', 'same', 'same', 'same']);
      assert.deepEqual(await inputs(await newConversation()), [], 'a key belongs to its conversation');
      const other = await newConversation();
      assert.equal((await send(other, { input: 'same' }, 'a')).status, 200);
      assert.deepEqual(await inputs(other), ['same']);
    });

    it('a retry of the turn that ended the conversation gets its answer, not 410', async () => {
      const id = await newConversation();
      const body = { input: 'bye', context: { actions: ctx('CONVERSATION_END') } };
      const first = await send(id, body, 'bye-1');
      assert.equal(first.json.conversationState, 'ENDED', first.text);
      const retried = await send(id, body, 'bye-1');
      assert.equal(retried.status, 200, retried.text);
      assert.deepEqual(retried.json, first.json);
      assert.equal((await send(id, body, 'bye-2')).status, 410);
    });

    it('the /bots message path and the stream path take the key too', async () => {
      const id = await newConversation();
      const botPath = `/bots/production/${agentId}/${id}`;
      const first = await send(id, { input: 'via bots' }, 'bots-1', botPath);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual((await send(id, { input: 'via bots' }, 'bots-1', botPath)).json, first.json);

      const streamed = await send(id, { input: 'via bots' }, 'bots-1', `/agents/${id}/stream`);
      assert.equal(streamed.status, 200, streamed.text);
      const done = streamed.text.split('\n\n').find((event) => event.startsWith('event: done'));
      assert.ok(done, streamed.text);
      const answer = JSON.parse(done.split('\n')[1]!.slice('data: '.length));
      assert.deepEqual(answer.conversationOutputs, [{ input: 'via bots' }]);
      assert.equal((await send(id, { input: 'other' }, 'bots-1', `/agents/${id}/stream`)).status, 422);
      assert.deepEqual(await inputs(id), ['via bots']);
    });

    it('a malformed key is a 400 problem', async () => {
      const id = await newConversation();
      for (const key of ['x'.repeat(256), 'with space', 'tab\there']) {
        const refused = await send(id, { input: 'x' }, key);
        assert.equal(refused.status, 400, refused.text);
        assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
      }
      assert.deepEqual(await inputs(id), []);
    });
  });
}
