import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createAgent,
  createResource,
  approvedCalculatorLlm,
  deployLlmAgent,
  deployRefundAgent,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi } from './support/fake-llm/openai.ts';
import { client } from './support/http.ts';
import type { FakeProvider } from './support/fake-llm/fake-server.ts';
import { serverOfBlock, startTestServer, storeTypes } from './support/server.ts';
import { sseEvents } from '../web/src/lib/sse.ts';

/**
 * Human in the loop: a rule pauses a turn (PAUSE_CONVERSATION), the conversation waits (AWAITING_HUMAN) and
 * queues the messages sent meanwhile, a person decides (approve, reject, answer), the turn goes on where it paused;
 * a restart while it waits loses nothing; every decision is in the audit ledger with who made it.
 */

const outputsOf = (body: any): string[] => body.conversationOutputs.at(-1)?.output ?? [];

for (const storeType of storeTypes) {
  describe(`human in the loop on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let agentId: string;

    before(async () => {
      agentId = await deployRefundAgent(api);
    });

    const pausedConversation = async () => {
      const { conversationId } = await startConversation(api, agentId);
      const paused = await sendMessage(api, conversationId, 'refund please');
      assert.equal(paused.conversationState, 'AWAITING_HUMAN');
      assert.equal(paused.hitlPauseType, 'pause');
      assert.deepEqual(outputsOf(paused), [], 'the output task after the pausing rule has not run');
      return conversationId as string;
    };

    it('pauses at the rule, queues messages meanwhile, and goes on where it paused when approved; nothing is lost across a restart', async () => {
      const conversationId = await pausedConversation();
      const queued = await sendMessage(api, conversationId, 'hello');
      assert.equal(queued.conversationState, 'AWAITING_HUMAN');
      assert.equal(queued.hitlQueuedMessages, 1);
      assert.equal((await api.post(`/agents/${conversationId}/undo`)).status, 409);

      await block.server.restart();

      const pending = await api.get(`/agents/pending-approvals?agentId=${agentId}`);
      assert.equal(pending.status, 200, pending.text);
      const item = pending.json.find((entry: any) => entry.conversationId === conversationId);
      assert.ok(item, pending.text);
      assert.equal(item.pauseType, 'pause');
      assert.equal(item.task, 'ai.svc.behavior');
      assert.equal(item.input, 'refund please');
      assert.equal(item.queuedMessages, 1);

      const status = await api.get(`/agents/${conversationId}/approval-status`);
      assert.deepEqual(status.json, { waiting: true, approval: item });

      const resumed = await api.post(`/agents/${conversationId}/resume`, {
        json: { decision: 'approve', approvalId: item.approvalId, reason: 'checked the receipt' },
      });
      assert.equal(resumed.status, 200, resumed.text);
      assert.equal(resumed.json.conversationState, 'READY');
      assert.deepEqual(outputsOf(resumed.json), ['Hi!'], 'the queued message ran after the decision');

      const all = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
      assert.deepEqual(
        all.json.conversationOutputs.map((output: any) => output.output ?? []),
        [[], ['Your refund is approved.'], ['Hi!']],
        'one step per message: the resumed turn replaced the waiting one',
      );
      const again = await api.post(`/agents/${conversationId}/resume`, {
        json: { decision: 'approve', approvalId: item.approvalId },
      });
      assert.equal(again.status, 409, 'a decided turn cannot be decided again');

      await block.server.server.audit.flush();
      const audit = await api.get(`/auditstore/${conversationId}?limit=100`);
      assert.equal(audit.status, 200, audit.text);
      const decision = audit.json.find((entry: any) => entry.taskType === 'hitl.decision');
      assert.ok(decision, audit.text);
      assert.equal(decision.output.decision, 'approve');
      assert.equal(decision.output.actor, 'anonymous');
      assert.equal(decision.output.reason, 'checked the receipt');
    });

    it("rejecting ends the turn without the rest of the pipeline; answering gives the person's text as the answer", async () => {
      const rejected = await pausedConversation();
      const afterReject = await api.post(`/agents/${rejected}/resume`, { json: { decision: 'reject' } });
      assert.equal(afterReject.status, 200, afterReject.text);
      assert.equal(afterReject.json.conversationState, 'READY');
      assert.deepEqual(outputsOf(afterReject.json), []);

      const answered = await pausedConversation();
      const afterAnswer = await api.post(`/agents/${answered}/resume`, {
        json: { decision: 'answer', answer: 'A colleague will call you.' },
      });
      assert.equal(afterAnswer.status, 200, afterAnswer.text);
      assert.deepEqual(outputsOf(afterAnswer.json), ['A colleague will call you.']);
      const next = await sendMessage(api, answered, 'hello');
      assert.deepEqual(outputsOf(next), ['Hi!'], 'the conversation goes on normally');
    });

    it('the inbox stream sends the waiting turns when it opens and again when a turn starts or stops waiting', async () => {
      const response = await fetch(`${block.server.url}/agents/pending-approvals/stream?agentId=${agentId}`);
      assert.equal(response.status, 200);
      const events = sseEvents(response.body!);
      const next = async () => {
        const { value } = await events.next();
        assert.equal(value?.event, 'pending-approvals');
        return JSON.parse(value!.data) as Array<{ conversationId: string }>;
      };
      const initial = await next();
      const conversationId = await pausedConversation();
      let listed = await next();
      while (!listed.some((item) => item.conversationId === conversationId)) listed = await next();
      assert.ok(initial.every((item) => item.conversationId !== conversationId));
      await api.post(`/agents/${conversationId}/resume`, { json: { decision: 'reject' } });
      while (listed.some((item) => item.conversationId === conversationId)) listed = await next();
      await events.return(undefined);
    });

    it('a message retried while the turn waits (same Idempotency-Key) is queued once and runs once', async () => {
      const conversationId = await pausedConversation();
      const send = (input: string) =>
        api.post(`/agents/${conversationId}`, { json: { input }, headers: { 'idempotency-key': 'msg-1' } });
      for (let attempt = 0; attempt < 2; attempt++) {
        const queued = await send('hello');
        assert.equal(queued.status, 200, queued.text);
        assert.equal(queued.json.hitlQueuedMessages, 1);
      }
      assert.equal((await send('something else')).status, 422);
      await api.post(`/agents/${conversationId}/resume`, { json: { decision: 'approve' } });
      const all = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
      assert.equal(all.json.conversationOutputs.length, 3, 'start, the refund turn, one hello');
      const retried = await send('hello');
      assert.deepEqual(outputsOf(retried.json), ['Hi!'], 'a retry after the run is answered from its step');
      assert.equal(
        (await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`)).json.conversationOutputs.length,
        3,
      );
    });

    it('refuses decisions that do not fit with a 400 and loses nothing', async () => {
      const conversationId = await pausedConversation();
      for (const body of [
        { decision: 'answer' },
        { decision: 'maybe' },
        { decision: 'approve', arguments: { call1: {} } },
        { decision: 'approve', surprise: true },
      ]) {
        const answer = await api.post(`/agents/${conversationId}/resume`, { json: body });
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /problem\+json/);
      }
      const status = await api.get(`/agents/${conversationId}/approval-status`);
      assert.equal(status.json.waiting, true);
      const ready = await api.post(
        `/agents/${await (async () => (await startConversation(api, agentId)).conversationId)()}/resume`,
        {
          json: { decision: 'approve' },
        },
      );
      assert.equal(ready.status, 409, 'a conversation that waits for nothing');
      assert.equal(
        (await api.post('/agents/0123456789abcdef01234567/resume', { json: { decision: 'approve' } })).status,
        404,
      );
    });
  });
}

for (const storeType of storeTypes) {
  describe(`tool calls that need approval (agent mode) on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let fake: FakeProvider;
    let agentId: string;

    before(async () => {
      fake = await startFakeOpenAi();
      agentId = await deployLlmAgent(api, approvedCalculatorLlm(fake.url));
    });
    after(() => fake.close());

    it('waits for approval, survives a restart, runs the call with the edited arguments and lets the model answer', async () => {
      fake.reset();
      const { conversationId } = await startConversation(api, agentId);
      fake.reply({ toolCalls: [{ id: 'call_a', name: 'calculator', args: { expression: '6 * 7' } }] });
      const waiting = await sendMessage(api, conversationId, 'What is 6 * 7?');
      assert.equal(waiting.conversationState, 'AWAITING_HUMAN');
      assert.equal(waiting.hitlPauseType, 'tool-approval');
      assert.deepEqual(waiting.hitlPendingToolCalls, [
        { toolCallId: 'call_a', tool: 'calculator', arguments: { expression: '6 * 7' } },
      ]);
      assert.equal(fake.requests.length, 1, 'the tool did not run and the model was not asked again');

      await block.server.restart();

      fake.reply({ text: 'It is 42.' });
      const resumed = await api.post(`/agents/${conversationId}/resume`, {
        json: { decision: 'approve', arguments: { call_a: { expression: '6 * 7 + 0' } }, reason: 'fine' },
      });
      assert.equal(resumed.status, 200, resumed.text);
      assert.equal(resumed.json.conversationState, 'READY');
      assert.deepEqual(outputsOf(resumed.json), ['It is 42.']);
      assert.equal(fake.requests.length, 2);
      const second = fake.requests[1]!.body;
      const toolMessage = second.messages.find((message: any) => message.role === 'tool');
      assert.equal(toolMessage.tool_call_id, 'call_a');
      assert.equal(toolMessage.content, '42', 'the approved call ran with the edited arguments');
      const assistant = second.messages.find((message: any) => message.tool_calls);
      assert.equal(assistant.tool_calls[0].function.arguments, JSON.stringify({ expression: '6 * 7 + 0' }));
    });

    it('a rejected call tells the model why, and the model answers', async () => {
      fake.reset();
      const { conversationId } = await startConversation(api, agentId);
      fake.reply({ toolCalls: [{ id: 'call_b', name: 'calculator', args: { expression: '1 + 1' } }] });
      await sendMessage(api, conversationId, 'What is 1 + 1?');
      fake.reply({ text: 'I may not calculate that.' });
      const resumed = await api.post(`/agents/${conversationId}/resume`, {
        json: { decision: 'reject', reason: 'not allowed' },
      });
      assert.equal(resumed.status, 200, resumed.text);
      assert.deepEqual(outputsOf(resumed.json), ['I may not calculate that.']);
      const toolMessage = fake.requests[1]!.body.messages.find((message: any) => message.role === 'tool');
      assert.equal(toolMessage.content, 'A person rejected this call: not allowed');
    });

    it('a tool the task does not offer cannot need approval (the agent does not deploy)', async () => {
      const llmUri = await createResource(api, '/llmstore/llms', {
        tasks: [
          {
            id: 'chat',
            type: 'openai',
            actions: ['chat'],
            enableBuiltInTools: true,
            builtInToolsWhitelist: ['datetime'],
            toolApprovals: ['calculator'],
            parameters: { apiKey: 'sk-test', baseUrl: `${fake.url}/v1`, modelName: 'gpt-4o-mini' },
          },
        ],
      });
      const wrong = await createAgent(api, { extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }] });
      const deployed = await api.post(`/administration/production/deploy/${wrong}?version=1&waitForCompletion=true`);
      assert.equal(deployed.json.status, 'ERROR', deployed.text);
      assert.match(deployed.text, /toolApprovals names 'calculator'/);
    });
  });
}

describe('the timeout policy of waiting turns', () => {
  for (const policy of ['escalate', 'reject'] as const) {
    it(`${policy}: applies to a turn nobody decided on in time`, async () => {
      const server = await startTestServer('sqlite', {
        'svc.hitl.timeout-seconds': 1,
        'svc.hitl.timeout-policy': policy,
      });
      try {
        const api = client(() => server.url);
        const agentId = await deployRefundAgent(api);
        const { conversationId } = await startConversation(api, agentId);
        await sendMessage(api, conversationId, 'refund please');
        for (;;) {
          const status = (await api.get(`/agents/${conversationId}/approval-status`)).json;
          if (policy === 'escalate' && status.approval?.escalated) break;
          if (policy === 'reject' && !status.waiting) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const conversation = (await api.get(`/agents/${conversationId}`)).json;
        assert.equal(conversation.conversationState, policy === 'escalate' ? 'AWAITING_HUMAN' : 'READY');
        if (policy === 'reject') {
          await server.server.audit.flush();
          const audit = (await api.get(`/auditstore/${conversationId}?limit=100`)).json;
          const decision = audit.find((entry: any) => entry.taskType === 'hitl.decision');
          assert.equal(decision.output.actor, 'timeout-policy');
          assert.equal(decision.output.decision, 'reject');
        } else {
          assert.ok(server.logLines.some((line) => line.includes('escalated')));
        }
      } finally {
        await server.dispose();
      }
    });
  }
});
