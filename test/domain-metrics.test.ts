import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  createResource,
  deployAgent,
  deployLlmAgent,
  deployRuleAgent,
  onEveryMessage,
  refundAgent,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi } from './support/fake-llm/index.ts';
import { loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { metricFamilies, sampleValue, scrape } from './support/metrics.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * The domain metrics at `/q/metrics` after conversations with a rule-based agent and an LLM agent (a loopback fake
 * OpenAI server): turns by agent and outcome, turn and task durations, LLM calls, tokens and cost, conversations,
 * deployments, the coordinator and the store.
 */
/** A loopback HTTP target: 200 with a JSON body on `/ok`, 404 elsewhere. */
async function startTarget(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const found = request.url?.startsWith('/ok') === true;
    response.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ found }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const calculatorCall = (expression: string) => ({ toolCalls: [{ name: 'calculator', args: { expression } }] });

for (const store of storeTypes) {
  describe(`domain metrics (${store})`, () => {
    const { api } = serverOfBlock(store, { 'svc.vault.master-key': 'domain-metrics-test-master-key-0123456789' });
    const loopback = loopbackOfBlock({ openai: startFakeOpenAi, target: startTarget });

    it('counts the turns of a rule-based and an LLM agent, the LLM calls, tokens and cost', async () => {
      const ruleAgent = await deployRuleAgent(api, refundAgent(false));
      const ruleConversation = (await startConversation(api, ruleAgent)).conversationId;
      assert.deepEqual((await sendMessage(api, ruleConversation, 'hello')).conversationOutputs.at(-1).output, ['Hi!']);

      const llmAgent = await deployLlmAgent(api, { tasks: [openAiTask(loopback.openai)] });
      const llmConversation = (await startConversation(api, llmAgent)).conversationId;
      loopback.openai.reply(
        { text: 'Hello there.', usage: { input: 1000, output: 500 } },
        { status: 500, message: 'the model is down' },
      );
      const answered = await sendMessage(api, llmConversation, 'hi');
      assert.equal(answered.conversationState, 'READY');
      const failed = await sendMessage(api, llmConversation, 'again');
      assert.equal(failed.conversationState, 'ERROR');

      const metrics = await scrape(api);
      const turns = (agentId: string, outcome: string) =>
        sampleValue(metrics, 'svc_conversation_turns_total', { agent_id: agentId, outcome });
      assert.equal(turns(ruleAgent, 'READY'), 2, 'the start step and the message');
      assert.equal(turns(ruleAgent, 'ERROR'), 0);
      assert.equal(turns(llmAgent, 'READY'), 2);
      assert.equal(turns(llmAgent, 'ERROR'), 1);
      assert.equal(
        sampleValue(metrics, 'svc_conversation_turn_duration_seconds_count', { agent_id: llmAgent }),
        3,
        'every turn is timed',
      );
      assert.equal(sampleValue(metrics, 'svc_conversations_started_total', { agent_id: ruleAgent }), 1);
      assert.equal(sampleValue(metrics, 'svc_conversations_started_total', { agent_id: llmAgent }), 1);
      assert.equal(sampleValue(metrics, 'svc_conversations_active'), 2);

      const model = { provider: 'openai', model: 'gpt-4o-mini' };
      assert.equal(sampleValue(metrics, 'svc_llm_calls_total', { ...model, outcome: 'ok' }), 1);
      assert.equal(sampleValue(metrics, 'svc_llm_calls_total', { ...model, outcome: 'error' }), 1);
      assert.equal(sampleValue(metrics, 'svc_llm_tokens_total', { ...model, direction: 'input' }), 1000);
      assert.equal(sampleValue(metrics, 'svc_llm_tokens_total', { ...model, direction: 'output' }), 500);
      // gpt-4o-mini: 0.15 USD per million input tokens, 0.6 per million output tokens.
      const cost = sampleValue(metrics, 'svc_llm_cost_usd_total', model);
      assert.ok(Math.abs(cost - (1000 * 0.15 + 500 * 0.6) / 1e6) < 1e-12, `cost ${cost}`);

      assert.equal(
        sampleValue(metrics, 'svc_task_duration_seconds_count', { task_type: 'ai.svc.parser', outcome: 'ok' }),
        2,
      );
      assert.equal(
        sampleValue(metrics, 'svc_task_duration_seconds_count', { task_type: 'ai.svc.llm', outcome: 'error' }),
        1,
      );
      assert.ok(sampleValue(metrics, 'svc_deployed_agents', { environment: 'production', status: 'READY' }) >= 2);
      assert.ok(sampleValue(metrics, 'svc_coordinator_wait_seconds_count') >= 2);
      assert.equal(sampleValue(metrics, 'svc_coordinator_queue_depth'), 0, 'nothing runs while scraping');
      assert.ok(
        sampleValue(metrics, 'svc_store_operation_duration_seconds_count', {
          kind: 'conversations',
          operation: 'commit',
        }) >= 3,
      );
      assert.doesNotMatch(metrics, new RegExp(`${ruleConversation}|${llmConversation}`), 'no conversation id as label');
    });

    it('counts HTTP calls by outcome, vault operations, tool calls and tool cache hits', async () => {
      const written = await api.put('/secretstore/secrets/default/targetToken', { json: { value: 's3cr3t-value' } });
      assert.ok(written.status === 200 || written.status === 201, written.text);
      const call = (name: string, path: string) => ({
        name,
        actions: [name],
        saveResponse: true,
        request: { path, headers: { Authorization: 'Bearer ${vault:targetToken}' } },
      });
      const httpCalls = await createResource(api, '/httpcallsstore/httpcalls', {
        targetServerUrl: `${loopback.target.url}/`,
        httpCalls: [call('found', '/ok'), call('missing', '/nothing')],
      });
      const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('found', 'missing'));
      const httpAgent = await deployAgent(api, {
        extensions: [
          { type: 'svc://ai.svc.behavior', config: { uri: rules } },
          { type: 'svc://ai.svc.httpcalls', config: { uri: httpCalls } },
        ],
      });
      const httpConversation = (await startConversation(api, httpAgent)).conversationId;
      await sendMessage(api, httpConversation, 'go');

      const toolAgent = await deployLlmAgent(api, {
        tasks: [{ ...openAiTask(loopback.openai), enableBuiltInTools: true, builtInToolsWhitelist: ['calculator'] }],
      });
      const toolConversation = (await startConversation(api, toolAgent)).conversationId;
      loopback.openai.reply(calculatorCall('6 * 7'), { text: '42.' }, calculatorCall('6 * 7'), { text: 'Still 42.' });
      await sendMessage(api, toolConversation, 'what is 6 * 7?');
      await sendMessage(api, toolConversation, 'and again?');

      const metrics = await scrape(api);
      assert.equal(sampleValue(metrics, 'svc_httpcall_duration_seconds_count', { outcome: '2xx' }), 1);
      assert.equal(sampleValue(metrics, 'svc_httpcall_duration_seconds_count', { outcome: '4xx' }), 1);
      assert.equal(sampleValue(metrics, 'svc_vault_operations_total', { operation: 'write', outcome: 'ok' }), 1);
      assert.ok(sampleValue(metrics, 'svc_vault_operations_total', { operation: 'resolve', outcome: 'ok' }) >= 2);
      assert.equal(sampleValue(metrics, 'svc_tool_calls_total', { tool: 'calculator', outcome: 'ok' }), 1);
      assert.equal(sampleValue(metrics, 'svc_tool_calls_total', { tool: 'calculator', outcome: 'cached' }), 1);
      assert.equal(sampleValue(metrics, 'svc_tool_cache_hits_total', { tool: 'calculator' }), 1);
      assert.doesNotMatch(metrics, /s3cr3t-value/);
    });

    it('GET /q/metrics/series: the turns made show up in the latest point and in the per-agent totals', async () => {
      const agentId = await deployRuleAgent(api, refundAgent(false));
      const before = await api.get('/q/metrics/series?window=hour');
      assert.equal(before.status, 200, before.text);
      const stepBefore = before.json.points.at(-1);
      const conversationId = (await startConversation(api, agentId)).conversationId;
      await sendMessage(api, conversationId, 'hello');
      await sendMessage(api, conversationId, 'hello');

      for (const window of ['hour', 'day']) {
        const answer = await api.get(`/q/metrics/series?window=${window}`);
        assert.equal(answer.status, 200, answer.text);
        const series = answer.json;
        assert.equal(series.window, window);
        assert.equal(series.stepSeconds, window === 'hour' ? 10 : 60);
        const latest = series.points.at(-1);
        assert.deepEqual(Object.keys(latest).sort(), ['errors', 'llmCostUsd', 'p50Ms', 'p95Ms', 'p99Ms', 't', 'turns']);
        assert.ok(latest.t <= Date.now() && latest.t > Date.now() - 2 * series.stepSeconds * 1000);
        assert.equal(latest.t % (series.stepSeconds * 1000), 0, 'steps start on the step boundary');
        if (window === 'hour') {
          // The sampler may close a step between two requests: the turns are in the latest points since then.
          const since = series.points.filter((point: { t: number }) => point.t >= stepBefore.t);
          assert.ok(since.length <= 2, JSON.stringify(since));
          const turns = since.reduce((sum: number, point: { turns: number }) => sum + point.turns, 0);
          assert.ok(turns >= stepBefore.turns + 3, JSON.stringify({ stepBefore, since }));
          const busiest = since.reduce((a: any, b: any) => (b.turns > a.turns ? b : a));
          assert.ok(busiest.p50Ms > 0 && busiest.p50Ms <= busiest.p95Ms && busiest.p95Ms <= busiest.p99Ms);
        }
        assert.deepEqual(
          series.byAgent.find((entry: { agentId: string }) => entry.agentId === agentId),
          { agentId, turns: 3, errors: 0 },
        );
      }
    });

    it('GET /q/metrics/series refuses a missing or unknown window with a 400 problem', async () => {
      for (const query of ['', '?window=week', '?window=hour&extra=1']) {
        const answer = await api.get(`/q/metrics/series${query}`);
        assert.equal(answer.status, 400, `${query}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
        assert.equal(answer.json.status, 400);
      }
    });

    it('the Grafana dashboard parses and every metric it queries is in the exposition', async () => {
      const dashboard = JSON.parse(
        await readFile(new URL('../deploy/grafana/svc-dashboard.json', import.meta.url), 'utf8'),
      );
      const expressions: string[] = dashboard.panels.flatMap((panel: { targets?: Array<{ expr: string }> }) =>
        (panel.targets ?? []).map((target) => target.expr),
      );
      assert.ok(expressions.length >= 25, `${expressions.length} queries`);
      const families = metricFamilies(await scrape(api));
      const queried = new Set(expressions.flatMap((expression) => expression.match(/\bsvc_\w+/g) ?? []));
      const missing = [...queried].filter((name) => {
        if (families.has(name)) return false;
        const histogram = /^(.*)_(bucket|count|sum)$/.exec(name);
        return !(histogram && families.get(histogram[1]!) === 'histogram');
      });
      assert.deepEqual(missing, []);
      for (const name of ['svc_conversation_turns_total', 'svc_llm_cost_usd_total', 'svc_task_duration_seconds'])
        assert.ok(
          [...queried].some((queriedName) => queriedName.startsWith(name)),
          `the dashboard charts ${name}`,
        );
    });
  });
}
