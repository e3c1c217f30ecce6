import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sendMessage } from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { conversationWith, lastStepValue, loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';
import { sseEvents } from './support/groups.ts';

/**
 * Model cascading (`modelCascade`) through the REST API against a loopback OpenAI-compatible fake, on both stores:
 * the three evaluation strategies, the cost ceiling, a cascade whose every step fails, and what is refused at
 * write time.
 */

const CHEAP = 'gpt-4o-mini';
const STRONG = 'gpt-4o';

function cascadeTask(fake: FakeProvider, cascade: Record<string, unknown>) {
  return openAiTask(fake, {
    retry: { maxAttempts: 3, backoffDelayMs: 0 },
    modelCascade: {
      steps: [
        { type: 'openai', parameters: { modelName: CHEAP } },
        { type: 'openai', parameters: { modelName: STRONG }, confidenceThreshold: 0.5 },
      ],
      ...cascade,
    },
  });
}

interface CascadeRecord {
  chosenStep: number;
  cost: number;
  attempts: Array<{
    step: number;
    modelName: string;
    outcome: string;
    reason?: string;
    confidence?: number;
    cost: number;
  }>;
}

for (const store of storeTypes) {
  describe(`LLM model cascades on ${store}`, () => {
    const block = serverOfBlock(store);
    const { api } = block;
    const loopback = loopbackOfBlock({ fake: startFakeOpenAi });

    async function detailed(id: string) {
      return (await api.get(`/agents/${id}?returnDetailed=true`)).json;
    }

    it('the streamed turn tells each cascade step as it starts and why it escalated', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, cascadeTask(loopback.fake, { evaluationStrategy: 'structured_output' }));
      loopback.fake.reply(
        { text: '{"answer":"Maybe Lyon","confidence":0.3}' },
        { text: '{"answer":"Paris","confidence":0.9}' },
      );
      const response = await fetch(`${block.server.url}/agents/${id}/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Capital of France?' }),
      });
      assert.equal(response.status, 200);
      const events = sseEvents(await response.text());
      const cascadeEvents = events.filter((e) => e.event.startsWith('cascade_'));
      assert.deepEqual(cascadeEvents, [
        {
          event: 'cascade_step_start',
          data: { type: 'cascade_step_start', task: 'chat', step: 0, provider: 'openai', modelName: CHEAP },
        },
        {
          event: 'cascade_escalation',
          data: {
            type: 'cascade_escalation',
            task: 'chat',
            fromStep: 0,
            toStep: 1,
            outcome: 'escalated',
            reason: 'confidence 0.3 is below 0.7',
          },
        },
        {
          event: 'cascade_step_start',
          data: { type: 'cascade_step_start', task: 'chat', step: 1, provider: 'openai', modelName: STRONG },
        },
      ]);
      const done = events.at(-1)!;
      assert.equal(done.event, 'done');
      assert.deepEqual(done.data.conversationOutputs[0].output, ['Paris']);
    });

    it('structured_output: a low confidence escalates to the next model; the record, metadata, costs and metrics say so', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, cascadeTask(loopback.fake, { evaluationStrategy: 'structured_output' }));
      loopback.fake.reply(
        { text: '{"answer":"Maybe Lyon","confidence":0.3}' },
        { text: '{"answer":"Paris","confidence":0.55}' },
      );
      const answer = await sendMessage(api, id, 'Capital of France?');
      assert.equal(answer.conversationState, 'READY');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Paris'], 'the answer field is the answer');
      assert.deepEqual(
        loopback.fake.requests.map((request) => request.body.model),
        [CHEAP, STRONG],
      );
      const format = loopback.fake.requests[0]!.body.response_format;
      assert.deepEqual(format.json_schema.schema.required, ['answer', 'confidence']);

      const conversation = await detailed(id);
      const record = lastStepValue(conversation, 'langchain:cascade:openai:chat') as CascadeRecord;
      assert.equal(record.chosenStep, 1);
      assert.deepEqual(
        record.attempts.map(({ step, modelName, outcome, confidence }) => ({ step, modelName, outcome, confidence })),
        [
          { step: 0, modelName: CHEAP, outcome: 'escalated', confidence: 0.3 },
          { step: 1, modelName: STRONG, outcome: 'accepted', confidence: 0.55 },
        ],
      );
      assert.equal(record.attempts[0]!.reason, 'confidence 0.3 is below 0.7');
      assert.ok(
        record.attempts.every((attempt) => attempt.cost > 0),
        'each attempt has its cost',
      );
      assert.equal(record.cost, record.attempts[0]!.cost + record.attempts[1]!.cost);
      const meta = lastStepValue(conversation, 'langchain:meta') as Record<string, unknown>;
      assert.equal(meta.cascadeStep, 1);
      assert.equal(meta.modelName, STRONG);
      assert.equal(meta.cost, record.cost);

      const costs = (await api.get(`/llm/tools/costs/conversation/${id}`)).json;
      assert.equal(costs.modelCalls, 2);
      const summary = (await api.get('/llm/tools/costs')).json.summary;
      assert.ok(summary.models[`openai:${CHEAP}`].calls >= 1 && summary.models[`openai:${STRONG}`].calls >= 1);
      const metrics = (await api.get('/q/metrics')).text;
      assert.match(
        metrics,
        new RegExp(`svc_llm_cascade_attempts_total\\{model="${CHEAP}",outcome="escalated"\\} [1-9]`),
      );
      assert.match(
        metrics,
        new RegExp(`svc_llm_cascade_attempts_total\\{model="${STRONG}",outcome="accepted"\\} [1-9]`),
      );
    });

    it('structured_output: a confident first answer stops there', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, cascadeTask(loopback.fake, {}));
      loopback.fake.reply({ text: '{"answer":"Paris","confidence":0.9}' });
      const answer = await sendMessage(api, id, 'Capital of France?');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Paris']);
      assert.equal(loopback.fake.requests.length, 1);
      const record = lastStepValue(await detailed(id), 'langchain:cascade:openai:chat') as CascadeRecord;
      assert.equal(record.chosenStep, 0);
    });

    it('failure: an error escalates at once (no retries before the last step), a plain answer is taken', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, cascadeTask(loopback.fake, { evaluationStrategy: 'failure' }));
      loopback.fake.reply({ status: 500, message: 'overloaded' }, { text: 'Paris.' });
      const answer = await sendMessage(api, id, 'Capital of France?');
      assert.equal(answer.conversationState, 'READY');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Paris.']);
      assert.equal(loopback.fake.requests.length, 2);
      assert.equal(loopback.fake.requests[0]!.body.response_format, undefined, 'no JSON is asked for');
      const record = lastStepValue(await detailed(id), 'langchain:cascade:openai:chat') as CascadeRecord;
      assert.equal(record.attempts[0]!.outcome, 'failed');
      assert.match(record.attempts[0]!.reason!, /failed \(status 500\)/);
      assert.equal(record.attempts[0]!.cost, 0);
    });

    it('validator: an answer that misses the pattern escalates; the cost ceiling stops escalation and keeps the answer', async () => {
      loopback.fake.reset();
      const id = await conversationWith(
        api,
        cascadeTask(loopback.fake, { evaluationStrategy: 'validator', validator: { pattern: '^\\d+$' } }),
      );
      loopback.fake.reply({ text: 'about forty' }, { text: '42' });
      assert.deepEqual((await sendMessage(api, id, 'How many?')).conversationOutputs[0].output, ['42']);
      const escalated = lastStepValue(await detailed(id), 'langchain:cascade:openai:chat') as CascadeRecord;
      assert.equal(escalated.attempts[0]!.reason, 'the answer does not match the pattern ^\\d+$');

      loopback.fake.reset();
      const capped = await conversationWith(
        api,
        cascadeTask(loopback.fake, {
          evaluationStrategy: 'validator',
          validator: { pattern: '^\\d+$' },
          maxCostPerRun: 0.000001,
        }),
      );
      loopback.fake.reply({ text: 'about forty' });
      assert.deepEqual((await sendMessage(api, capped, 'How many?')).conversationOutputs[0].output, ['about forty']);
      assert.equal(loopback.fake.requests.length, 1, 'the ceiling stops the escalation');
      const record = lastStepValue(await detailed(capped), 'langchain:cascade:openai:chat') as CascadeRecord;
      assert.equal(record.attempts[0]!.outcome, 'accepted');
      assert.match(record.attempts[0]!.reason!, /taken because the cost ceiling \(maxCostPerRun 0.000001\) is reached/);
    });

    it('ends the turn in ERROR naming every attempt when all steps fail; the last step is retried', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, cascadeTask(loopback.fake, { evaluationStrategy: 'failure' }));
      loopback.fake.reply(
        { status: 500, message: 'down' },
        { status: 503, message: 'down' },
        { status: 503, message: 'down' },
        { status: 503, message: 'down' },
      );
      const failed = await sendMessage(api, id, 'Capital of France?');
      assert.equal(failed.conversationState, 'ERROR');
      assert.equal(loopback.fake.requests.length, 4, 'one call to the first step, three attempts at the last');
      assert.match(failed.error, /every step of the model cascade failed/);
      assert.match(failed.error, /step 0 \(gpt-4o-mini\): The openai model 'gpt-4o-mini' failed \(status 500\)/);
      assert.match(failed.error, /step 1 \(gpt-4o\): .*after 3 attempts/);
      loopback.fake.reply({ text: 'Back.' });
      assert.equal((await sendMessage(api, id, 'Again?')).conversationState, 'READY');
    });

    it('refuses what a cascade cannot do with 400', async () => {
      const refused = async (cascade: Record<string, unknown>, fields: Record<string, unknown> = {}) => {
        const answer = await api.post('/llmstore/llms', {
          json: { tasks: [{ ...cascadeTask(loopback.fake, cascade), ...fields }] },
        });
        assert.equal(answer.status, 400, JSON.stringify(cascade));
        return answer.json.detail as string;
      };
      assert.match(await refused({ evaluationStrategy: 'judge_model' }), /evaluationStrategy/);
      assert.match(
        await refused({ evaluationStrategy: 'validator' }),
        /needs validator.pattern or validator.jsonSchema/,
      );
      assert.match(
        await refused({ evaluationStrategy: 'validator', validator: { pattern: '(' } }),
        /not a regular expression/,
      );
      assert.match(await refused({ steps: [] }), /steps/);
      assert.match(
        await refused({}, { responseSchema: { type: 'object' } }),
        /use validator.jsonSchema instead of 'responseSchema'/,
      );
      assert.match(await refused({}, { toolApprovals: ['*'] }), /tool approvals pause a turn/);
      const off = await api.post('/llmstore/llms', {
        json: { tasks: [openAiTask(loopback.fake, { modelCascade: { enabled: false, steps: [] } })] },
      });
      assert.equal(off.status, 201, 'a switched-off cascade (as exports carry it) is accepted');
    });
  });
}
