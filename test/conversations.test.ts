import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deploy, deployAgent, idFromLocation, sayContext, welcomeOutputs } from './support/agents.ts';
import { controlExtension, controlTask, turnGate } from './support/control-task.ts';
import { client } from './support/http.ts';
import { sampleValue, scrape } from './support/metrics.ts';
import { serverOfBlock, startTestServer, storeTypes, type TestServer } from './support/server.ts';

const ctx = (value: string) => ({ type: 'string', value });

for (const storeType of storeTypes) {
  describe(`conversations on ${storeType}`, () => {
    const block = serverOfBlock(storeType, { 'svc.conversations.turn-timeout-seconds': 1 }, [controlTask]);
    const { api } = block;
    let agentId: string;

    before(async () => {
      agentId = await deployAgent(api, { extensions: [controlExtension], outputSet: welcomeOutputs });
    });

    const start = async (body?: unknown, query = '') => {
      const answer = await api.post(`/agents/${agentId}/start${query}`, body === undefined ? {} : { json: body });
      assert.equal(answer.status, 201, answer.text);
      return { answer, id: idFromLocation(answer.headers.get('location')) };
    };

    it('start answers 201 with Location and every step so far; step 0 has CONVERSATION_START and its output', async () => {
      const { answer, id } = await start();
      assert.match(
        answer.headers.get('location')!,
        /^svc:\/\/ai\.svc\.conversation\/conversationstore\/conversations\/[0-9a-f]{24}$/,
      );
      assert.equal(answer.json.conversationId, id);
      assert.equal(answer.json.agentId, agentId);
      assert.equal(answer.json.agentVersion, 1);
      assert.equal(answer.json.environment, 'production');
      assert.equal(answer.json.conversationState, 'READY');
      assert.equal(answer.json.undoAvailable, false);
      assert.equal(answer.json.redoAvailable, false);
      assert.match(answer.json.userId, /^anonymous-[0-9a-f]{32}$/);
      assert.deepEqual(answer.json.conversationOutputs, [
        {
          actions: ['CONVERSATION_START'],
          output: ['Welcome!'],
          quickReplies: [{ value: 'Hi', expressions: 'greeting(hi)' }],
        },
      ]);
      const keys = answer.json.conversationSteps[0].conversationStep.map((entry: any) => entry.key);
      assert.deepEqual(keys, ['actions', 'output:text:CONVERSATION_START', 'quickReplies:CONVERSATION_START']);
      const item = answer.json.conversationSteps[0].conversationStep[1];
      assert.deepEqual(item.value, { type: 'text', text: 'Welcome!', delay: 0 });
      assert.equal(typeof item.timestamp, 'number');
    });

    it('start with input and context runs step 0 and step 1; the context reaches both; userId from the query', async () => {
      const { answer } = await start({ input: 'hello there', context: { city: ctx('Vienna') } }, '?userId=alice');
      assert.equal(answer.json.userId, 'alice');
      assert.equal(answer.json.conversationOutputs.length, 2);
      assert.equal(answer.json.conversationOutputs[1].input, 'hello there');
      const detailed = await api.get(
        `/agents/${answer.json.conversationId}?returnDetailed=true&returnCurrentStepOnly=false`,
      );
      for (const step of detailed.json.conversationSteps) {
        assert.deepEqual(step.conversationStep.find((e: any) => e.key === 'context:city').value, {
          type: 'string',
          value: 'Vienna',
        });
      }
      assert.deepEqual(detailed.json.conversationOutputs[1].context, { city: 'Vienna' });
    });

    it('a bare context map is accepted as the start body (upstream form)', async () => {
      const { answer } = await start({ userId: ctx('bob'), channel: ctx('web') });
      assert.equal(answer.json.userId, 'bob');
      assert.equal(answer.json.conversationOutputs.length, 1);
    });

    it('messages: JSON and text/plain, returnDetailed and returnCurrentStepOnly, GET', async () => {
      const { id } = await start();
      const first = await api.post(`/agents/${id}`, {
        json: { input: 'first', context: sayContext('You said first') },
      });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.conversationOutputs.length, 1);
      assert.deepEqual(first.json.conversationOutputs[0], { input: 'first', output: ['You said first'] });
      assert.deepEqual(
        first.json.conversationSteps[0].conversationStep.map((e: any) => e.key),
        ['input:initial', 'output:text:context'],
      );
      assert.equal(first.json.undoAvailable, true);

      const plain = await api.post(`/agents/${id}?returnCurrentStepOnly=false`, {
        body: 'second',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(plain.status, 200, plain.text);
      assert.equal(plain.json.conversationOutputs.length, 3);
      assert.equal(plain.json.conversationOutputs[2].input, 'second');

      const detailed = await api.get(`/agents/${id}?returnDetailed=true`);
      assert.equal(detailed.json.conversationSteps.length, 1);
      assert.ok(
        detailed.json.conversationSteps[0].conversationStep.some(
          (e: any) => e.key === 'input:initial' && e.value === 'second',
        ),
      );
      const all = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(all.json.conversationSteps.length, 3);
      assert.equal((await api.get(`/agents/${id}/status`)).json, 'READY');
    });

    it('conversation properties: conversation and longTerm scopes; longTerm is carried to the next conversation of the user', async () => {
      const { id } = await start(undefined, '?userId=carol');
      const set = async (name: string, value: unknown, scope: string) =>
        api.post(`/agents/${id}`, {
          json: { input: 'x', context: { property: { type: 'object', value: { name, value, scope } } } },
        });
      await set('city', 'Vienna', 'conversation');
      await set('visits', 3, 'longTerm');
      const stepScoped = await set('scratch', 'gone', 'step');
      assert.deepEqual(stepScoped.json.conversationProperties, {
        city: { name: 'city', value: 'Vienna', scope: 'conversation' },
        visits: { name: 'visits', value: 3, scope: 'longTerm' },
      });
      const next = await start(undefined, '?userId=carol');
      assert.deepEqual(next.answer.json.conversationProperties, {
        visits: { name: 'visits', value: 3, scope: 'longTerm' },
      });
      const stranger = await start(undefined, '?userId=dave');
      assert.deepEqual(stranger.answer.json.conversationProperties, {});
    });

    it('a longTerm property set by the steps of a start (its input and context) is kept for the next conversation', async () => {
      const property = { name: 'plan', value: 'gold', scope: 'longTerm' };
      await start({ input: 'x', context: { property: { type: 'object', value: property } } }, '?userId=fiona');
      const next = await start(undefined, '?userId=fiona');
      assert.deepEqual(next.answer.json.conversationProperties, { plan: property });
    });

    it("an anonymous start reads no long-term properties (its user id is new); a named user's start does", async () => {
      const propertyLoads = async () =>
        sampleValue(await scrape(api), 'svc_store_operations_total', {
          kind: 'userProperties',
          operation: 'load',
          outcome: 'ok',
        });
      const before = await propertyLoads();
      const anonymous = await start();
      assert.match(anonymous.answer.json.userId, /^anonymous-[0-9a-f]{32}$/);
      assert.equal(await propertyLoads(), before, 'no read for an id made just now');
      await start(undefined, '?userId=gina');
      assert.equal(await propertyLoads(), before + 1, "a named user's properties are read");
    });

    it('50 messages fired at once at one conversation are all processed, one at a time, none lost', async () => {
      const { id } = await start();
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          api.post(`/agents/${id}?returnCurrentStepOnly=false`, { json: { input: `message ${n}` } }),
        ),
      );
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      const final = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(final.json.conversationSteps.length, 51);
      const finalInputs: string[] = final.json.conversationOutputs.slice(1).map((o: any) => o.input);
      assert.deepEqual(
        [...finalInputs].sort(),
        Array.from({ length: 50 }, (_, n) => `message ${n}`).sort(),
        'each message exactly once',
      );
      // Every answer saw a distinct, complete prefix of the final history: the turns ran one after the other.
      const lengths = answers.map((answer) => answer.json.conversationOutputs.length).sort((a, b) => a - b);
      assert.deepEqual(
        lengths,
        Array.from({ length: 50 }, (_, n) => n + 2),
      );
      for (const answer of answers) {
        const inputs = answer.json.conversationOutputs.slice(1).map((o: any) => o.input);
        assert.deepEqual(inputs, finalInputs.slice(0, inputs.length));
      }
    });

    it('undo -> redo -> new message clears redo; undo restores conversation properties', async () => {
      const { id } = await start();
      const setCity = (city: string) =>
        api.post(`/agents/${id}`, {
          json: {
            input: city,
            context: { property: { type: 'object', value: { name: 'city', value: city, scope: 'conversation' } } },
          },
        });
      await setCity('Vienna');
      await setCity('Paris');
      assert.equal((await api.get(`/agents/${id}/undo`)).text, 'true');
      assert.equal((await api.get(`/agents/${id}/redo`)).text, 'false');
      assert.equal((await api.post(`/agents/${id}/undo`)).status, 200);
      let state = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(state.json.conversationSteps.length, 2);
      assert.equal(state.json.redoAvailable, true);
      assert.equal(state.json.conversationProperties.city.value, 'Vienna', 'the undone answer is forgotten');
      assert.equal((await api.post(`/agents/${id}/redo`)).status, 200);
      state = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(state.json.conversationSteps.length, 3);
      assert.equal(state.json.conversationOutputs[2].input, 'Paris');
      assert.equal(state.json.conversationProperties.city.value, 'Paris');
      await api.post(`/agents/${id}/undo`);
      await api.post(`/agents/${id}`, { json: { input: 'Rome' } });
      assert.equal((await api.get(`/agents/${id}/redo`)).text, 'false', 'a new message clears the redo cache');
      const redo = await api.post(`/agents/${id}/redo`);
      assert.equal(redo.status, 409);
      assert.match(redo.headers.get('content-type') ?? '', /problem\+json/);
      await api.post(`/agents/${id}/undo`);
      await api.post(`/agents/${id}/undo`);
      const atStart = await api.post(`/agents/${id}/undo`);
      assert.equal(atStart.status, 409, 'no undo past step 0');
    });

    it('CONVERSATION_END ends after the turn (its output is still sent); later messages answer 410', async () => {
      const { id } = await start();
      const bye = await api.post(`/agents/${id}`, {
        json: { input: 'bye', context: { actions: ctx('CONVERSATION_END'), ...sayContext('Goodbye!') } },
      });
      assert.equal(bye.status, 200);
      assert.equal(bye.json.conversationState, 'ENDED');
      assert.deepEqual(bye.json.conversationOutputs[0].output, ['Goodbye!']);
      const after = await api.post(`/agents/${id}`, { json: { input: 'hello?' } });
      assert.equal(after.status, 410);
      assert.match(after.json.detail, /ended/);
      assert.equal((await api.get(`/agents/${id}/undo`)).text, 'false');
    });

    it('STOP_CONVERSATION ends at once; endConversation is idempotent', async () => {
      const { id } = await start();
      const stop = await api.post(`/agents/${id}`, {
        json: { input: 'stop', context: { actions: ctx('STOP_CONVERSATION'), ...sayContext('never shown') } },
      });
      assert.equal(stop.json.conversationState, 'ENDED');
      assert.equal(stop.json.conversationOutputs[0].output, undefined, 'tasks after the stop did not run');
      const other = (await start()).id;
      assert.equal((await api.post(`/agents/${other}/endConversation`)).status, 200);
      assert.equal((await api.post(`/agents/${other}/endConversation`)).status, 200);
      assert.equal((await api.post(`/agents/${other}`, { json: { input: 'x' } })).status, 410);
    });

    it('a failing task answers 200 with conversationState ERROR and the next message is processed normally', async () => {
      const { id } = await start();
      const failed = await api.post(`/agents/${id}`, { json: { input: 'boom', context: { fail: ctx('yes') } } });
      assert.equal(failed.status, 200);
      assert.equal(failed.json.conversationState, 'ERROR');
      const next = await api.post(`/agents/${id}`, { json: { input: 'fine', context: sayContext('ok') } });
      assert.equal(next.json.conversationState, 'READY');
      assert.deepEqual(next.json.conversationOutputs[0].output, ['ok']);
      assert.ok(block.server.logLines.some((line) => line.includes('a task failed') && line.includes(id)));
    });

    it('a turn past the timeout answers 408 and leaves EXECUTION_INTERRUPTED; the next message recovers', async () => {
      const { id } = await start();
      const neverReleased = turnGate();
      const slow = await api.post(`/agents/${id}`, { json: { input: 'slow', context: neverReleased.context } });
      assert.equal(slow.status, 408, slow.text);
      assert.match(slow.headers.get('content-type') ?? '', /problem\+json/);
      const state = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(state.json.conversationState, 'EXECUTION_INTERRUPTED');
      assert.equal(state.json.conversationSteps.length, 1, 'the interrupted step is not kept');
      const next = await api.post(`/agents/${id}`, { json: { input: 'quick' } });
      assert.equal(next.status, 200);
      assert.equal(next.json.conversationState, 'READY');
    });

    it('a conversation reads IN_PROGRESS while a turn runs, READY after it', async () => {
      const { id } = await start();
      const gate = turnGate();
      const slow = api.post(`/agents/${id}`, { json: { input: 'slow', context: gate.context } });
      await gate.reached;
      assert.equal((await api.get(`/agents/${id}/status`)).json, 'IN_PROGRESS');
      gate.release();
      assert.equal((await slow).json.conversationState, 'READY');
      assert.equal((await api.get(`/agents/${id}/status`)).json, 'READY');
    });

    it('a message can be followed as server-sent events: task progress, then the conversation', async () => {
      const { id } = await start();
      const response = await fetch(`${block.server.url}/agents/${id}/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'hi', context: sayContext('Hello!') }),
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = (await response.text())
        .trim()
        .split('\n\n')
        .map((block) => {
          const [eventLine, dataLine] = block.split('\n');
          return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
        });
      assert.deepEqual(
        events.map((e) => e.event),
        ['task_start', 'task_complete', 'task_start', 'task_complete', 'done'],
      );
      assert.equal(events[0]!.data.task, 'ai.svc.test.control');
      assert.deepEqual(events.at(-1)!.data.conversationOutputs, [{ input: 'hi', output: ['Hello!'] }]);
      assert.equal((await api.post('/agents/0123456789abcdef01234567/stream', { json: { input: 'x' } })).status, 404);
      await api.post(`/agents/${id}/endConversation`);
      assert.equal((await api.post(`/agents/${id}/stream`, { json: { input: 'x' } })).status, 410);
    });

    it('bad input: unknown or malformed ids 404, bad context 400, input null 400, empty and 1 MB inputs work', async () => {
      assert.equal((await api.post('/agents/0123456789abcdef01234567', { json: { input: 'x' } })).status, 404);
      assert.equal((await api.post('/agents/not-a-conversation', { json: { input: 'x' } })).status, 404);
      assert.equal((await api.get('/agents/0123456789abcdef01234567')).status, 404);
      assert.equal((await api.post('/agents/0123456789abcdef01234567/start')).status, 404);
      const { id } = await start();
      const badType = await api.post(`/agents/${id}`, {
        json: { input: 'x', context: { city: { type: 'colour', value: 'red' } } },
      });
      assert.equal(badType.status, 400);
      assert.equal(badType.json.path, '$.context.city.type');
      const badValue = await api.post(`/agents/${id}`, {
        json: { input: 'x', context: { city: { type: 'string', value: 42 } } },
      });
      assert.equal(badValue.status, 400);
      assert.equal(
        (await api.post(`/agents/${id}`, { json: { input: 'x', context: { city: 'Vienna' } } })).status,
        400,
      );
      assert.equal((await api.post(`/agents/${id}`, { json: { input: null } })).status, 400);
      assert.equal((await api.post(`/agents/${id}`, { json: { input: 5 } })).status, 400);
      assert.equal(
        (await api.post(`/agents/${id}`, { body: '{"input": ', headers: { 'content-type': 'application/json' } }))
          .status,
        400,
      );
      assert.equal((await api.post(`/agents/${id}`, { json: {} })).status, 200);
      assert.equal((await api.post(`/agents/${id}`, { json: { input: '' } })).status, 200);
      const big = await api.post(`/agents/${id}`, { json: { input: 'a'.repeat(1024 * 1024) } });
      assert.equal(big.status, 200);
      assert.equal(big.json.conversationOutputs[0].input.length, 1024 * 1024);
      const state = await api.get(`/agents/${id}?returnCurrentStepOnly=false`);
      assert.equal(state.json.conversationSteps.length, 4, 'only the accepted messages became steps');
    });

    it('the conversation store reads, lists with filters and deletes', async () => {
      const { id } = await start(undefined, '?userId=erin');
      await api.post(`/agents/${id}`, { json: { input: 'hello' } });
      const raw = await api.get(`/conversationstore/conversations/${id}`);
      assert.equal(raw.status, 200);
      assert.equal(raw.json.conversationSteps.length, 2);
      assert.ok(raw.json.conversationSteps[1].conversationStep.some((e: any) => e.key === 'input:initial'));
      const listed = await api.get(`/conversationstore/conversations?userId=erin&agentId=${agentId}`);
      assert.equal(listed.status, 200);
      assert.equal(listed.json.length, 1);
      assert.deepEqual(
        { ...listed.json[0], createdOn: 0, lastModifiedOn: 0 },
        {
          resource: `svc://ai.svc.conversation/conversationstore/conversations/${id}`,
          conversationId: id,
          agentId,
          agentVersion: 1,
          userId: 'erin',
          environment: 'production',
          conversationState: 'READY',
          conversationStepSize: 2,
          createdOn: 0,
          lastModifiedOn: 0,
        },
      );
      const ended = await api.get('/conversationstore/conversations?conversationState=ENDED&limit=100');
      assert.ok(ended.json.every((c: any) => c.conversationState === 'ENDED') && ended.json.length >= 2);
      const paged = await api.get('/conversationstore/conversations?limit=2&index=1');
      assert.equal(paged.json.length, 2);
      assert.equal((await api.get('/conversationstore/conversations?conversationState=SLEEPING')).status, 400);
      assert.equal((await api.delete(`/conversationstore/conversations/${id}`)).status, 200);
      assert.equal((await api.get(`/agents/${id}`)).status, 404);
      assert.equal((await api.delete(`/conversationstore/conversations/${id}`)).status, 404);
    });

    it('a restart in the middle of a conversation loses no acknowledged step; deployments survive it', async () => {
      const { id } = await start();
      for (const input of ['one', 'two', 'three'])
        assert.equal((await api.post(`/agents/${id}`, { json: { input } })).status, 200);
      await api.post(`/agents/${id}/undo`);
      const before = await api.get(`/agents/${id}?returnDetailed=true&returnCurrentStepOnly=false`);
      await block.server.restart();
      const after = await api.get(`/agents/${id}?returnDetailed=true&returnCurrentStepOnly=false`);
      assert.deepEqual(after.json, before.json);
      assert.equal(after.json.redoAvailable, true);
      assert.equal((await api.post(`/agents/${id}/redo`)).status, 200);
      const next = await api.post(`/agents/${id}?returnCurrentStepOnly=false`, { json: { input: 'four' } });
      assert.deepEqual(
        next.json.conversationOutputs.slice(1).map((o: any) => o.input),
        ['one', 'two', 'three', 'four'],
      );
      assert.equal((await start()).answer.status, 201, 'the agent is deployed again after the restart');
    });
  });
}

describe('the bound on active conversations', () => {
  let server: TestServer;
  const api = client(() => server.url);
  after(async () => {
    await server?.dispose();
  });

  it('answers 503 with Retry-After past it, while queued messages of active conversations go on', async () => {
    server = await startTestServer('sqlite', { 'svc.coordinator.max-active-conversations': 1 }, [controlTask]);
    const agentId = await createAgent(api, { extensions: [controlExtension] });
    await deploy(api, agentId);
    const busy = idFromLocation((await api.post(`/agents/${agentId}/start`)).headers.get('location'));
    const other = idFromLocation((await api.post(`/agents/${agentId}/start`)).headers.get('location'));
    const gate = turnGate();
    const slow = api.post(`/agents/${busy}`, { json: { input: 'slow', context: gate.context } });
    await gate.reached;
    const queued = api.post(`/agents/${busy}`, { json: { input: 'queued' } });
    const refused = await api.post(`/agents/${other}`, { json: { input: 'refused' } });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
    gate.release();
    assert.equal((await slow).status, 200);
    assert.equal((await queued).status, 200);
    const retried = await api.post(`/agents/${other}`, { json: { input: 'retried' } });
    assert.equal(retried.status, 200);
    assert.equal(
      (await api.get(`/agents/${other}?returnCurrentStepOnly=false`)).json.conversationSteps.length,
      2,
      'the refused message left no trace',
    );
  });
});
