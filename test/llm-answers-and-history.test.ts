import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sendMessage } from './support/agents.ts';
import { conversationWith, lastStepValue, loopbackOfBlock, openAiTask as task } from './support/llm-agents.ts';
import { sentConversation, startFakeOpenAi } from './support/fake-llm/index.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Structured answers (`responseSchema`, the `responseFormat` parameter), the history bounded by estimated tokens
 * (`maxContextTokens`, `anchorFirstSteps`) with a rolling summary (`summarizeHistory`), and the built-in tools the
 * original has and this service does not: through the REST API against a loopback OpenAI-compatible fake, on both
 * stores.
 */

const ANSWER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
  required: ['city', 'confidence'],
  additionalProperties: false,
};

for (const store of storeTypes) {
  describe(`LLM structured answers and token-bounded history on ${store}`, () => {
    const { api } = serverOfBlock(store);
    const loopback = loopbackOfBlock({ fake: startFakeOpenAi });

    it('asks for the schema, accepts a matching answer and binds it as an object for the post-response instructions', async () => {
      loopback.fake.reset();
      const id = await conversationWith(
        api,
        task(loopback.fake, {
          responseSchema: ANSWER_SCHEMA,
          postResponse: {
            propertyInstructions: [{ name: 'city', valueString: '{chat.city}', scope: 'conversation' }],
          },
        }),
      );
      loopback.fake.reply({ text: '{"city":"Vienna","confidence":0.9}' });
      const answer = await sendMessage(api, id, 'Where is the Prater?');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(loopback.fake.requests.length, 1, 'a valid answer needs no repair');
      const format = loopback.fake.requests[0]!.body.response_format;
      assert.equal(format.type, 'json_schema', 'the provider is asked for the schema');
      assert.deepEqual(format.json_schema.schema, ANSWER_SCHEMA);
      const detailed = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
      assert.equal((lastStepValue(detailed, 'langchain:meta') as any).repairAttempts, 0);
      assert.equal(detailed.conversationProperties.city?.value, 'Vienna');
    });

    it('repairs an answer that misses the schema once, naming the problem to the model', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, task(loopback.fake, { responseSchema: ANSWER_SCHEMA }));
      loopback.fake.reply({ text: '{"city":"Vienna"}' }, { text: '```json\n{"city":"Vienna","confidence":0.5}\n```' });
      const answer = await sendMessage(api, id, 'Where is the Prater?');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(loopback.fake.requests.length, 2);
      const repair = sentConversation('openai', loopback.fake.requests[1]!).messages;
      assert.deepEqual(repair.at(-2), { role: 'assistant', text: '{"city":"Vienna"}' }, 'the failed answer is shown');
      assert.match(repair.at(-1)!.text, /must have required property 'confidence'/);
      const detailed = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
      const meta = lastStepValue(detailed, 'langchain:meta') as any;
      assert.equal(meta.repairAttempts, 1);
      const costs = (await api.get(`/llm/tools/costs/conversation/${id}`)).json;
      assert.equal(costs.modelCalls, 2, 'both calls are counted');
    });

    it('ends the turn in ERROR when the repaired answer still fails, and the next message works', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, task(loopback.fake, { responseSchema: ANSWER_SCHEMA }));
      loopback.fake.reply({ text: 'Vienna, I think.' }, { text: '{"city":"Vienna","confidence":7}' });
      const failed = await sendMessage(api, id, 'Where is the Prater?');
      assert.equal(failed.conversationState, 'ERROR');
      assert.equal(loopback.fake.requests.length, 2, 'exactly one repair attempt');
      assert.match(sentConversation('openai', loopback.fake.requests[1]!).messages.at(-1)!.text, /is not JSON/);

      loopback.fake.reply({ text: '{"city":"Graz","confidence":1}' });
      const next = await sendMessage(api, id, 'And the Schlossberg?');
      assert.equal(next.conversationState, 'READY');
      assert.deepEqual(next.conversationOutputs[0].output, ['{"city":"Graz","confidence":1}']);
    });

    it('responseFormat "json" asks for JSON without a schema and checks that the answer parses', async () => {
      loopback.fake.reset();
      const id = await conversationWith(api, task(loopback.fake, {}, { responseFormat: 'json' }));
      loopback.fake.reply({ text: 'not json' }, { text: '{"ok":true}' });
      const answer = await sendMessage(api, id, 'Answer in JSON');
      assert.equal(answer.conversationState, 'READY');
      assert.deepEqual(loopback.fake.requests[0]!.body.response_format, { type: 'json_object' });
      assert.deepEqual(answer.conversationOutputs[0].output, ['{"ok":true}']);
    });

    it('refuses an invalid responseSchema, an unknown responseFormat and the built-in tools it does not have with 400', async () => {
      const badSchema = await api.post('/llmstore/llms', {
        json: { tasks: [task(loopback.fake, { responseSchema: { type: 'objekt' } })] },
      });
      assert.equal(badSchema.status, 400);
      assert.match(badSchema.json.detail, /'responseSchema' is not a valid JSON schema/);

      const badFormat = await api.post('/llmstore/llms', {
        json: { tasks: [task(loopback.fake, {}, { responseFormat: 'yaml' })] },
      });
      assert.equal(badFormat.status, 400);
      assert.match(badFormat.json.detail, /'responseFormat' must be "json" or "text", not 'yaml'/);

      for (const tool of ['websearch', 'weather', 'pdfreader']) {
        const refused = await api.post('/llmstore/llms', {
          json: {
            tasks: [task(loopback.fake, { enableBuiltInTools: true, builtInToolsWhitelist: ['calculator', tool] })],
          },
        });
        assert.equal(refused.status, 400, tool);
        assert.match(refused.json.detail, new RegExp(`The built-in tool '${tool}' .* is not available here`));
      }
      const unknown = await api.post('/llmstore/llms', {
        json: { tasks: [task(loopback.fake, { enableBuiltInTools: true, builtInToolsWhitelist: ['abacus'] })] },
      });
      assert.equal(unknown.status, 400);
      assert.match(unknown.json.detail, /'abacus' .* is not a built-in tool/);
      const alias = await api.post('/llmstore/llms', {
        json: {
          tasks: [
            task(loopback.fake, { enableBuiltInTools: true, builtInToolsWhitelist: ['fetch_tool_response_page'] }),
          ],
        },
      });
      assert.equal(alias.status, 201, 'an alias of a built-in tool is accepted');
    });

    it('maxContextTokens keeps the first steps and the newest that fit; summarizeHistory sends a rolling summary of the rest', async () => {
      loopback.fake.reset();
      const id = await conversationWith(
        api,
        task(loopback.fake, {
          maxContextTokens: 60,
          anchorFirstSteps: 2,
          summarizeHistory: true,
          conversationHistoryLimit: -1,
        }),
      );
      const topics = ['apples', 'bananas', 'cherries', 'dates', 'elderberries', 'figs'];
      for (const topic of topics) {
        loopback.fake.reply({ text: `Noted ${topic}.` });
        await sendMessage(api, id, `Tell me about ${topic} please.`);
      }
      const last = sentConversation('openai', loopback.fake.requests.at(-1)!);
      const texts = last.messages.map((m) => m.text);
      assert.deepEqual(texts.slice(0, 3), ['Welcome!', 'Tell me about apples please.', 'Noted apples.'], 'anchors');
      assert.equal(texts.at(-1), 'Tell me about figs please.');
      assert.ok(!texts.includes('Tell me about bananas please.'), 'a middle step is left out');
      const estimated = ['Be brief.', ...texts].reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
      assert.ok(estimated <= 60, `the system message, history and input stay within the budget (${estimated})`);
      assert.match(last.system!, /^Be brief\.\n\nSummary of the earlier conversation: .*bananas/s);

      const detailed = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
      const summary = lastStepValue(detailed, 'langchain:summary:openai:chat') as { text: string; throughStep: number };
      assert.match(summary.text, /User: Tell me about bananas please\./);
      assert.ok(summary.throughStep >= 2, 'the summary says how far it reaches');

      const unbounded = await conversationWith(api, task(loopback.fake, { conversationHistoryLimit: -1 }));
      loopback.fake.reset();
      for (const topic of topics) {
        loopback.fake.reply({ text: `Noted ${topic}.` });
        await sendMessage(api, unbounded, `Tell me about ${topic} please.`);
      }
      const all = sentConversation('openai', loopback.fake.requests.at(-1)!);
      assert.equal(all.messages.length, 2 + (topics.length - 1) * 2, 'without a budget every step is sent');
      assert.equal(all.system, 'Be brief.', 'no summary unless asked');
    });
  });
}
