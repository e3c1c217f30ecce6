import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createResource, deployAgent, onEveryMessage, startConversation } from './support/agents.ts';
import { startFakeOpenAi, type FakeProvider } from './support/fake-llm/index.ts';
import { client } from './support/http.ts';
import { openAiTask } from './support/llm-agents.ts';
import { LoopbackMcpServer } from './support/mcp-server.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * OpenTelemetry traces against a loopback OTLP/HTTP receiver (decoding the JSON the exporter sends) and a loopback
 * HTTP target recording the `traceparent` it gets: the request, turn, task, outbound HTTP/LLM and store spans arrive
 * with the right parents, and the outbound call carries the turn's trace id. Without an endpoint nothing is traced.
 */

interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly service: string;
}

/** A loopback OTLP/HTTP traces receiver: accepts `POST /v1/traces` (JSON) and keeps the spans. */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      contentTypes.push(String(request.headers['content-type']));
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = resourceSpans.resource?.attributes?.find(
          (attribute: { key: string }) => attribute.key === 'service.name',
        )?.value?.stringValue;
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const { key, value } of span.attributes ?? []) attributes[key] = Object.values(value)[0];
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes,
              service,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback HTTP target answering JSON and recording the headers of each request. */
async function startTarget() {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    received.push(request.headers);
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"temp":21}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Behavior (`lookup` and `chat` on every message) -> an HTTP call to the target -> an MCP tool call (`forecast`) ->
 * the LLM task; deployed.
 */
async function deployTracedAgent(
  server: TestServer,
  targetUrl: string,
  fake: FakeProvider,
  mcp: LoopbackMcpServer,
): Promise<string> {
  const api = apiOf(server);
  const httpCalls = await createResource(api, '/httpcallsstore/httpcalls', {
    targetServerUrl: `${targetUrl}/`,
    httpCalls: [{ name: 'lookup', actions: ['lookup'], saveResponse: true, request: { path: '/weather' } }],
  });
  const mcpCalls = await createResource(api, '/mcpcallsstore/mcpcalls', {
    mcpServerUrl: `${mcp.url}/mcp`,
    toolsWhitelist: ['forecast'],
    mcpCalls: [{ name: 'forecast', actions: ['lookup'], toolName: 'forecast', toolArguments: { city: 'Graz' } }],
  });
  const llm = { tasks: [openAiTask(fake, { enableMcpCallTools: false })] };
  return deployAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.behavior',
        config: { uri: await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('lookup', 'chat')) },
      },
      { type: 'svc://ai.svc.httpcalls', config: { uri: httpCalls } },
      { type: 'svc://ai.svc.mcpcalls', config: { uri: mcpCalls } },
      { type: 'svc://ai.svc.llm', config: { uri: await createResource(api, '/llmstore/llms', llm) } },
    ],
  });
}

const apiOf = (server: TestServer) => client(() => server.url);

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

for (const store of storeTypes) {
  describe(`traces (${store})`, () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let target: Awaited<ReturnType<typeof startTarget>>;
    let fake: FakeProvider;
    let mcp: LoopbackMcpServer;
    let server: TestServer;

    before(async () => {
      receiver = await startOtlpReceiver();
      target = await startTarget();
      fake = await startFakeOpenAi();
      mcp = await new LoopbackMcpServer().start();
      server = await startTestServer(
        store,
        { 'svc.tracing.otlp-endpoint': `${receiver.url}/v1/traces`, 'svc.tracing.service-name': 'svc-under-test' },
        [],
        { traceExportDelayMillis: 20 },
      );
    });
    after(async () => {
      await server?.dispose();
      await Promise.all([receiver?.close(), target?.close(), fake?.close(), mcp?.close()]);
    });

    /** Waits (bounded) until the spans of trace `traceId` include every name in `names`. */
    async function spansOf(traceId: string, names: readonly string[]): Promise<ReceivedSpan[]> {
      for (let attempt = 0; attempt < 200; attempt++) {
        const found = receiver.spans.filter((span) => span.traceId === traceId);
        if (names.every((name) => found.some((span) => span.name === name))) return found;
        await sleep(25);
      }
      const seen = receiver.spans.filter((span) => span.traceId === traceId).map((span) => span.name);
      assert.fail(`spans ${JSON.stringify(names)} did not all arrive; got ${JSON.stringify(seen)}`);
    }

    it('exports request, turn, task, outbound and store spans with their parents; traceparent reaches the target', async () => {
      const api = apiOf(server);
      const agentId = await deployTracedAgent(server, target.url, fake, mcp);
      const conversationId = (await startConversation(api, agentId)).conversationId;
      target.received.length = 0;
      mcp.headers.length = 0;
      fake.reply({ text: 'It is 21 degrees.' });
      const answer = await api.post(`/agents/${conversationId}`, {
        json: { input: 'weather?' },
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json.conversationOutputs.at(-1).output, ['It is 21 degrees.']);

      const spans = await spansOf(CALLER_TRACE, [
        'POST /agents/:conversationId',
        'turn',
        'task ai.svc.behavior',
        'task ai.svc.httpcalls',
        'task ai.svc.mcpcalls',
        'task ai.svc.llm',
        'chat gpt-4o-mini',
        'mcp tools/call forecast',
      ]);
      const named = (name: string) => {
        const matching = spans.filter((span) => span.name === name);
        assert.equal(matching.length, 1, `one span ${name}: ${JSON.stringify(spans.map((s) => s.name))}`);
        return matching[0]!;
      };
      const request = named('POST /agents/:conversationId');
      assert.equal(request.parentSpanId, CALLER_SPAN, "the request span continues the caller's trace");
      assert.equal(request.kind, 2, 'SERVER');
      assert.equal(request.attributes['http.response.status_code'], 200);
      assert.equal(request.service, 'svc-under-test');
      const turn = named('turn');
      assert.equal(turn.parentSpanId, request.spanId);
      assert.equal(turn.attributes['svc.agent.id'], agentId);
      assert.equal(turn.attributes['svc.turn.outcome'], 'READY');
      for (const task of ['ai.svc.behavior', 'ai.svc.httpcalls', 'ai.svc.mcpcalls', 'ai.svc.llm'])
        assert.equal(named(`task ${task}`).parentSpanId, turn.spanId, task);
      const chat = named('chat gpt-4o-mini');
      assert.equal(chat.parentSpanId, named('task ai.svc.llm').spanId);
      assert.equal(chat.attributes['gen_ai.system'], 'openai');
      assert.equal(chat.attributes['gen_ai.usage.input_tokens'], 11);
      const mcpCall = named('mcp tools/call forecast');
      assert.equal(mcpCall.parentSpanId, named('task ai.svc.mcpcalls').spanId);

      const clientSpans = spans.filter((span) => span.kind === 3);
      const httpCall = clientSpans.find((span) => span.parentSpanId === named('task ai.svc.httpcalls').spanId);
      assert.ok(httpCall, `an outbound span under the HTTP-call task: ${JSON.stringify(clientSpans)}`);
      assert.equal(httpCall.name, 'HTTP GET');
      assert.equal(httpCall.attributes['http.response.status_code'], 200);
      const llmCall = clientSpans.find((span) => span.parentSpanId === chat.spanId);
      assert.ok(llmCall, 'an outbound span under the model request');
      assert.equal(llmCall.name, 'HTTP POST');

      assert.equal(target.received.length, 1);
      assert.equal(
        target.received[0]!.traceparent,
        `00-${CALLER_TRACE}-${httpCall.spanId}-01`,
        "the target gets the turn's trace id and the outbound span as parent",
      );
      const sentToModel = fake.requests.at(-1)!.headers.traceparent;
      assert.equal(sentToModel, `00-${CALLER_TRACE}-${llmCall.spanId}-01`);
      const mcpRequests = clientSpans.filter((span) => span.parentSpanId === mcpCall.spanId);
      assert.ok(mcpRequests.length >= 1, 'the MCP request is an outbound span under the MCP call');
      const mcpParents = new Set(mcpRequests.map((span) => `00-${CALLER_TRACE}-${span.spanId}-01`));
      assert.ok(
        mcp.headers.some((headers) => mcpParents.has(String(headers.traceparent))),
        "the MCP server gets the turn's trace",
      );

      const storeSpans = spans.filter((span) => span.name.startsWith('store '));
      assert.ok(
        storeSpans.some((span) => span.name === 'store conversations.commit'),
        JSON.stringify(storeSpans.map((span) => span.name)),
      );
      const inTrace = new Set(spans.map((span) => span.spanId));
      for (const span of storeSpans)
        assert.ok(inTrace.has(span.parentSpanId!), `${span.name} has a parent in the trace`);
      assert.ok(receiver.contentTypes.every((type) => type.startsWith('application/json')));
      assert.doesNotMatch(JSON.stringify(spans), /weather\?|sk-test/, 'no message text or key in the spans');
    });

    it('a request without traceparent starts a trace of its own', async () => {
      const answer = await apiOf(server).get('/q/health/live');
      assert.equal(answer.status, 200);
      for (let attempt = 0; attempt < 200; attempt++) {
        if (receiver.spans.some((span) => span.name === 'GET /q/health/live')) break;
        await sleep(25);
      }
      const live = receiver.spans.find((span) => span.name === 'GET /q/health/live');
      assert.ok(live);
      assert.equal(live.parentSpanId, undefined);
      assert.match(live.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(live.traceId, CALLER_TRACE);
    });
  });
}

describe('traces off (no endpoint)', () => {
  it('sends no traceparent on outbound calls', async () => {
    const target = await startTarget();
    const fake = await startFakeOpenAi();
    const mcp = await new LoopbackMcpServer().start();
    const server = await startTestServer('sqlite');
    try {
      const agentId = await deployTracedAgent(server, target.url, fake, mcp);
      const conversationId = (await startConversation(apiOf(server), agentId)).conversationId;
      fake.reply({ text: 'Fine.' });
      const answer = await apiOf(server).post(`/agents/${conversationId}`, {
        json: { input: 'weather?' },
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(target.received.length, 1);
      assert.equal(target.received[0]!.traceparent, undefined);
      assert.equal(fake.requests.at(-1)!.headers.traceparent, undefined);
      assert.ok(mcp.headers.length > 0);
      assert.ok(mcp.headers.every((headers) => headers.traceparent === undefined));
    } finally {
      await server.dispose();
      await Promise.all([target.close(), fake.close(), mcp.close()]);
    }
  });
});
