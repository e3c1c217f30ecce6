import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  approvedCalculatorLlm,
  deployLlmAgent,
  deployRuleAgent,
  idFromLocation,
  refundAgent,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Transcripts (issue 21) of conversations with human in the loop (issue 20): a step whose turn waited for a person
 * records the decision, and a replay gives the waiting turn that decision; a turn that waits where the transcript
 * records none, or does not wait where it records one, fails its step, and no replay is left waiting in the inbox.
 */

interface Field {
  readonly field: string;
  readonly passed: boolean;
  readonly diff?: string;
}
interface Step {
  readonly step: number;
  readonly passed: boolean;
  readonly conversationState: string;
  readonly fields: Field[];
}

const ANSWER = 'A colleague will call you.';

/** A real loopback refund service: `GET /refunds/check` answers `{"status": "ok"}`. */
async function startRefundService() {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 'ok' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The refund agent whose approved refund is checked by an HTTP call after the pause (it sets `refundStatus`). */
function checkedRefundAgent(serviceUrl: string, pauses: boolean) {
  return {
    ...refundAgent(pauses),
    httpCalls: {
      targetServerUrl: serviceUrl,
      httpCalls: [
        {
          name: 'checkRefund',
          actions: ['refund_checked'],
          saveResponse: true,
          responseObjectName: 'refundCheck',
          request: { method: 'get', path: 'refunds/check' },
          postResponse: {
            propertyInstructions: [
              { name: 'refundStatus', fromObjectPath: 'refundCheck.status', scope: 'conversation' },
            ],
          },
        },
      ],
    },
  };
}

for (const storeType of storeTypes) {
  describe(`transcripts of conversations that waited for a person, on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let agentId: string;
    let transcriptId: string;
    let recorded: any;

    const run = async (id: string, agentVersion: number, version = 1) => {
      const answer = await api.post(`/transcriptstore/transcripts/${id}/runs?version=${version}`, {
        json: { agentId, agentVersion },
      });
      assert.equal(answer.status, 200, answer.text);
      return answer.json as { passed: boolean; conversationId: string; steps: Step[] };
    };
    const waitingInInbox = async () => {
      const pending = await api.get(`/agents/pending-approvals?agentId=${agentId}`);
      assert.equal(pending.status, 200, pending.text);
      return pending.json as unknown[];
    };

    let service: Awaited<ReturnType<typeof startRefundService>>;

    before(async () => {
      service = await startRefundService();
      // Version 1 pauses on 'refund'; version 2 approves the refund without asking anyone.
      agentId = await deployRuleAgent(api, checkedRefundAgent(service.url, true));
      const withoutPause = await deployRuleAgent(api, checkedRefundAgent(service.url, false));
      const body = await api.get(`/agentstore/agents/${withoutPause}?version=1`);
      const updated = await api.put(`/agentstore/agents/${agentId}?version=1`, { json: body.json });
      assert.equal(updated.status, 200, updated.text);

      const { conversationId } = await startConversation(api, agentId);
      const paused = await sendMessage(api, conversationId, 'refund please');
      assert.equal(paused.conversationState, 'AWAITING_HUMAN');
      const waiting = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
      assert.equal(waiting.status, 409, 'a conversation waiting for a person is not recorded');
      assert.match(waiting.json.detail, /waits for a person/);
      const decide = async (json: unknown) => {
        const resumed = await api.post(`/agents/${conversationId}/resume`, { json });
        assert.equal(resumed.status, 200, resumed.text);
      };
      await decide({ decision: 'approve', reason: 'receipt checked' });
      assert.equal((await sendMessage(api, conversationId, 'refund again')).conversationState, 'AWAITING_HUMAN');
      await decide({ decision: 'answer', answer: ANSWER, reason: 'twice' });
      await sendMessage(api, conversationId, 'hello');

      const created = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
      assert.equal(created.status, 201, created.text);
      transcriptId = idFromLocation(created.headers.get('location'));
      recorded = (await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`)).json;
      // From here on the refund service is gone: replays answer its call from the recording.
      await service.close();
    });

    after(() => service?.close());

    it("records the person's decision with the step whose turn waited, and only there", () => {
      const [approved, answered, hello] = recorded.turns;
      assert.deepEqual(approved.decision, { action: 'approve', reason: 'receipt checked' });
      assert.deepEqual(approved.expected.output.value, ['Your refund is approved.']);
      assert.deepEqual(approved.expected.properties.refundStatus, { value: 'ok', compare: 'exact' });
      assert.equal(approved.recordings.httpCalls[0].name, 'checkRefund', 'the call made after the decision');
      assert.deepEqual(answered.decision, { action: 'answer', answer: ANSWER, reason: 'twice' });
      assert.deepEqual(answered.expected.output.value, [ANSWER]);
      assert.equal(hello.decision, undefined);
      assert.equal(recorded.start.decision, undefined);
    });

    it('replays green from the recordings: each waiting turn gets the recorded decision, nothing is left in the inbox', async () => {
      const result = await run(transcriptId, 1);
      assert.equal(result.passed, true, JSON.stringify(result, null, 2));
      assert.deepEqual(
        result.steps.map((step) => step.fields.find((field) => field.field === 'decision')),
        [
          undefined,
          { field: 'decision', compare: 'exact', expected: 'approve', actual: 'approve', passed: true },
          { field: 'decision', compare: 'exact', expected: 'answer', actual: 'answer', passed: true },
          undefined,
        ],
      );
      assert.deepEqual(await waitingInInbox(), []);
      await block.server.server.audit.flush();
      const audit = await api.get(`/auditstore/${result.conversationId}?limit=100`);
      const decisions = audit.json.filter((entry: any) => entry.taskType === 'hitl.decision');
      assert.deepEqual(
        decisions.map((entry: any) => [entry.output.decision, entry.output.actor]),
        [
          ['approve', 'transcript-run'],
          ['answer', 'transcript-run'],
        ],
        audit.text,
      );
    });

    it('fails the steps whose turn no longer waits for a person, naming the decision', async () => {
      const result = await run(transcriptId, 2);
      assert.equal(result.passed, false);
      assert.deepEqual(
        result.steps.map((step) => [
          step.passed,
          step.fields.filter((field) => !field.passed).map((field) => field.field),
        ]),
        [
          [true, []],
          // Version 2 gives no PAUSE_CONVERSATION action, and makes the HTTP call the person's answer had prevented.
          [false, ['decision', 'actions']],
          [false, ['recordings', 'decision', 'output', 'actions']],
          [true, []],
        ],
      );
      assert.match(
        result.steps[1]!.fields.find((field) => field.field === 'decision')!.diff!,
        /recorded turn waited for a person \(decided approve\); the replayed turn did not wait/,
      );
    });

    it('fails a turn that waits where the transcript records no decision, and ends that conversation', async () => {
      const [approved, ...rest] = recorded.turns;
      const { decision: _dropped, ...undecided } = approved;
      const edited = await api.put(`/transcriptstore/transcripts/${transcriptId}?version=1`, {
        json: { ...recorded, turns: [undecided, ...rest] },
      });
      assert.equal(edited.status, 200, edited.text);
      const result = await run(transcriptId, 1, 2);
      assert.equal(result.passed, false);
      const [, waited, ...later] = result.steps;
      const decision = waited!.fields.find((field) => field.field === 'decision');
      assert.match(decision!.diff!, /waited for a person, and the transcript records no decision/);
      assert.equal(waited!.conversationState, 'ENDED');
      for (const step of later) assert.match(step.fields[0]!.diff!, /the conversation had ended/);
      assert.deepEqual(await waitingInInbox(), [], 'the replay left nothing waiting for a person');
      const conversation = await api.get(`/agents/${result.conversationId}`);
      assert.equal(conversation.json.conversationState, 'ENDED');
    });

    it('refuses a recorded decision that does not fit (400 naming the field)', async () => {
      for (const decision of [{ action: 'answer' }, { action: 'approve', answer: 'yes' }, { action: 'maybe' }]) {
        const answer = await api.post('/transcriptstore/transcripts', {
          json: { turns: [{ input: 'refund', decision }] },
        });
        assert.equal(answer.status, 400, `${JSON.stringify(decision)}: ${answer.text}`);
        assert.match(answer.text, /decision/);
      }
    });
  });
}

describe("transcripts of a conversation whose LLM task's tool call waited for approval", () => {
  const block = serverOfBlock('sqlite');
  const { api } = block;
  let fake: FakeProvider;
  let agentId: string;
  let transcript: any;
  let transcriptId: string;

  const run = async (mode: string) => {
    const answer = await api.post(`/transcriptstore/transcripts/${transcriptId}/runs`, {
      json: { agentId, agentVersion: 1, mode },
    });
    assert.equal(answer.status, 200, answer.text);
    return answer.json as { passed: boolean; conversationId: string; steps: Step[] };
  };

  before(async () => {
    fake = await startFakeOpenAi();
    agentId = await deployLlmAgent(api, approvedCalculatorLlm(fake.url));
    const { conversationId } = await startConversation(api, agentId);
    fake.reply({ toolCalls: [{ id: 'call_a', name: 'calculator', args: { expression: '6 * 7' } }] });
    const waiting = await sendMessage(api, conversationId, 'What is 6 * 7?');
    assert.equal(waiting.hitlPauseType, 'tool-approval');
    fake.reply({ text: 'It is 42.' });
    const resumed = await api.post(`/agents/${conversationId}/resume`, { json: { decision: 'approve' } });
    assert.equal(resumed.status, 200, resumed.text);
    const created = await api.post(`/transcriptstore/transcripts/from-conversation/${conversationId}`);
    assert.equal(created.status, 201, created.text);
    transcriptId = idFromLocation(created.headers.get('location'));
    transcript = (await api.get(`/transcriptstore/transcripts/${transcriptId}?version=1`)).json;
  });
  after(() => fake.close());

  it('records the decision as a tool approval, beside the LLM answer that ended the tool loop', () => {
    const [turn] = transcript.turns;
    assert.deepEqual(turn.decision, { action: 'approve', pauseType: 'tool-approval' });
    assert.deepEqual(turn.recordings.llm, [{ task: 'chat', answer: 'It is 42.' }]);
  });

  it('replays green from the recorded LLM answer, which stands for the tool loop: nothing waits, no model is asked', async () => {
    const asked = fake.requests.length;
    const result = await run('recorded');
    assert.equal(result.passed, true, JSON.stringify(result, null, 2));
    assert.equal(result.steps[1]!.conversationState, 'READY');
    assert.equal(
      result.steps[1]!.fields.find((field) => field.field === 'decision'),
      undefined,
      'the decision is not checked',
    );
    assert.equal(fake.requests.length, asked);
  });

  it('with the LLM live, the tool call waits again and gets the recorded approval; the tool runs', async () => {
    fake.reply({ toolCalls: [{ id: 'call_b', name: 'calculator', args: { expression: '6 * 7' } }] });
    fake.reply({ text: 'It is 42.' });
    const result = await run('live-llm');
    assert.equal(result.passed, true, JSON.stringify(result, null, 2));
    const decision = result.steps[1]!.fields.find((field) => field.field === 'decision');
    assert.deepEqual(decision, {
      field: 'decision',
      compare: 'exact',
      expected: 'approve',
      actual: 'approve',
      passed: true,
    });
    const toolMessage = fake.requests.at(-1)!.body.messages.find((message: any) => message.role === 'tool');
    assert.equal(toolMessage.content, '42', 'the approved call ran');
  });
});
