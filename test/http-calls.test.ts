import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createResource, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { closedPort, type client } from './support/http.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * HTTP calls (SPEC "HTTP-call set", reference §8), black-box: agents built through the REST API call a real
 * loopback HTTP target started here. Behavior rules turn a `do` context value into the action of the same name,
 * so each message chooses which call runs; the message input feeds the templates.
 */

const MASTER_KEY = 'http-calls test master key 4d9e2b';
const API_TOKEN = 'tok-9f8e7d6c5b4a-secret';

interface Received {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly socket: Socket;
}

/** The loopback API the agents call; it records every request it receives. */
class Target {
  readonly received: Received[] = [];
  readonly #server: Server;
  readonly #held: ServerResponse[] = [];
  readonly #flaky = new Map<string, number>();
  readonly #waiters = new Map<string, (request: Received) => void>();
  url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => this.#handle(request, response, Buffer.concat(chunks).toString('utf8')));
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const response of this.#held) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Resolves with the next request to `path`. */
  next(path: string): Promise<Received> {
    return new Promise((resolve) => this.#waiters.set(path, resolve));
  }

  hits(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  #handle(request: IncomingMessage, response: ServerResponse, body: string): void {
    const url = new URL(request.url ?? '/', 'http://target');
    const received: Received = {
      method: request.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body,
      socket: request.socket,
    };
    this.received.push(received);
    this.#waiters.get(url.pathname)?.(received);
    this.#waiters.delete(url.pathname);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-served-by': 'target',
        'set-cookie': 'session=abc',
      });
      response.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case '/weather':
        json(200, {
          name: url.searchParams.get('q'),
          main: { temp: 12.5, humidity: 80 },
          items: [
            { id: 'a', label: 'Alpha' },
            { id: 'b', label: 'Beta' },
          ],
        });
        return;
      case '/echo':
        json(200, {
          method: request.method,
          body,
          authorization: request.headers.authorization ?? null,
          key: url.searchParams.get('key'),
        });
        return;
      case '/slow':
        this.#held.push(response); // never answered
        return;
      case '/flaky': {
        const key = url.searchParams.get('key') ?? '';
        const seen = (this.#flaky.get(key) ?? 0) + 1;
        this.#flaky.set(key, seen);
        if (seen < 3) json(503, { error: 'busy' });
        else json(200, { ok: true, attempts: seen });
        return;
      }
      case '/big':
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('x'.repeat(10_000));
        return;
      case '/moved':
        response.writeHead(302, { location: '/weather?q=Redirected' });
        response.end();
        return;
      default:
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end(`nothing at ${url.pathname}`);
    }
  }
}

const ACTIONS = [
  'weather',
  'submit',
  'broken',
  'slow',
  'refused',
  'httpcall(ping)',
  'flaky',
  'big',
  'fire',
  'moved',
  'secret',
  'plain',
  'batch',
  'login',
];

/** One rule per action: it fires when the message's context `do` names the action. */
const rules = {
  behaviorGroups: [
    {
      name: 'By context',
      behaviorRules: ACTIONS.map((action) => ({
        name: action,
        actions: [action],
        conditions: [{ type: 'contextmatcher', configs: { contextKey: 'do', contextType: 'string', string: action } }],
      })),
    },
  ],
};

const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
const outputs = {
  outputSet: [
    {
      action: 'weather',
      timesOccurred: 0,
      outputs: [text('{memory.current.input}: {memory.current.httpCalls.weather.main.temp} degrees')],
    },
    { action: 'broken', timesOccurred: 0, outputs: [text('Code {memory.current.httpCalls.brokenHttpCode}')] },
    { action: 'plain', timesOccurred: 0, outputs: [text('Fine.')] },
  ],
};

function httpCallSet(targetUrl: string, refusedUrl: string) {
  return {
    targetServerUrl: `${targetUrl}/`,
    httpCalls: [
      {
        name: 'weather',
        actions: ['weather'],
        saveResponse: true,
        responseObjectName: 'weather',
        responseHeaderObjectName: 'weatherHeaders',
        request: { method: 'get', path: 'weather', queryParams: { q: '{memory.current.input}', units: 'metric' } },
        postResponse: {
          propertyInstructions: [
            { name: 'temperature', fromObjectPath: 'weather.main.temp', scope: 'conversation' },
            { name: 'city', fromObjectPath: 'memory.current.httpCalls.weather.name', scope: 'conversation' },
          ],
          outputBuildInstructions: [
            { pathToTargetArray: 'weather.items', iterationObjectName: 'item', outputValue: 'Item {item.label}' },
          ],
          qrBuildInstruction: {
            pathToTargetArray: 'weather.items',
            iterationObjectName: 'item',
            quickReplyValue: '{item.label}',
            quickReplyExpressions: 'choice({item.id})',
            templateFilterExpression: "{item.id == 'b'}",
          },
        },
      },
      {
        name: 'submit',
        actions: ['submit'],
        saveResponse: true,
        responseObjectName: 'submitted',
        request: {
          method: 'POST',
          path: '/echo',
          contentType: 'application/json',
          headers: { 'X-Conversation': '{conversationInfo.conversationId}' },
          body: '{"city":"{memory.current.input}","temperature":{properties.temperature}}',
        },
      },
      { name: 'broken', actions: ['broken'], saveResponse: true, request: { path: '/missing/{memory.current.input}' } },
      { name: 'slow', actions: ['slow'], timeoutInMillis: 300, request: { path: '/slow' } },
      { name: 'refused', actions: ['refused'], request: { path: `${refusedUrl}/nothing` } },
      { name: 'ping', saveResponse: true, request: { path: '/echo', queryParams: { from: 'ping' } } },
      {
        name: 'flaky',
        actions: ['flaky'],
        saveResponse: true,
        request: { path: '/flaky', queryParams: { key: '{conversationInfo.conversationId}' } },
        postResponse: {
          retryApiCallInstruction: { maxRetries: 3, exponentialBackoffDelayInMillis: 1, retryOnHttpCodes: [503] },
        },
      },
      { name: 'big', actions: ['big'], saveResponse: true, maxResponseSizeInBytes: 100, request: { path: '/big' } },
      {
        name: 'fire',
        actions: ['fire'],
        fireAndForget: true,
        saveResponse: true,
        request: { method: 'POST', path: '/fire', body: 'sent {memory.current.input}' },
      },
      { name: 'moved', actions: ['moved'], saveResponse: true, request: { path: '/moved' } },
      {
        name: 'batch',
        actions: ['batch'],
        saveResponse: true,
        responseObjectName: 'forecasts',
        preRequest: {
          batchRequests: {
            pathToTargetArray: 'context.cities',
            iterationObjectName: 'city',
            executeCallsSequentially: true,
          },
        },
        request: { path: '/weather', queryParams: { q: '{city}' } },
      },
      {
        name: 'secret',
        actions: ['secret'],
        saveResponse: true,
        request: {
          method: 'POST',
          path: '/echo',
          queryParams: { key: '${vault:apiToken}' },
          headers: { Authorization: 'Bearer ${vault:apiToken}', 'X-Plain': 'p-${vault:apiToken}' },
          body: 'user said: {memory.current.input}',
        },
      },
      {
        name: 'login',
        actions: ['login'],
        saveResponse: true,
        request: { method: 'POST', path: '/echo', body: '{memory.current.input}' },
        postResponse: {
          propertyInstructions: [{ name: 'sessionToken', fromObjectPath: 'login.body', scope: 'secret' }],
        },
      },
    ],
  };
}

async function buildAgent(api: ReturnType<typeof client>, targetUrl: string, refusedUrl: string): Promise<string> {
  const create = (path: string, body: unknown) => createResource(api, path, body);
  return deployAgent(api, {
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: await create('/behaviorstore/behaviorsets', rules) } },
      {
        type: 'svc://ai.svc.httpcalls',
        config: { uri: await create('/httpcallsstore/httpcalls', httpCallSet(targetUrl, refusedUrl)) },
      },
      { type: 'svc://ai.svc.output', config: { uri: await create('/outputstore/outputsets', outputs) } },
      { type: 'svc://ai.svc.templating', config: {} },
    ],
  });
}

function entry(answer: any, key: string): unknown {
  const step = answer.conversationSteps.at(-1);
  return step.conversationStep.find((candidate: { key: string }) => candidate.key === key)?.value;
}

for (const storeType of storeTypes) {
  describe(`HTTP calls on ${storeType}`, () => {
    const target = new Target();
    const block = serverOfBlock(storeType, { 'svc.vault.master-key': MASTER_KEY });
    const { api } = block;
    let agentId: string;

    before(async () => {
      await target.start();
      const stored = await api.put('/secretstore/secrets/default/apiToken', { json: { value: API_TOKEN } });
      assert.equal(stored.status, 200, stored.text);
      agentId = await buildAgent(api, target.url, `http://127.0.0.1:${await closedPort()}`);
    });
    after(async () => {
      await target.stop();
    });

    const start = async () => (await startConversation(api, agentId)).conversationId as string;
    const say = (conversationId: string, action: string, input = 'Vienna') =>
      sendMessage(api, conversationId, input, {
        context: { do: { type: 'string', value: action } },
        query: '?returnDetailed=true',
      });

    it('GET with a templated query; the response is used in the output, properties and quick replies', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'weather', 'Vienna');
      assert.equal(answer.conversationState, 'READY');
      const received = target.hits('/weather').at(-1)!;
      assert.equal(received.query.get('q'), 'Vienna');
      assert.equal(received.query.get('units'), 'metric');

      const output = answer.conversationOutputs.at(-1);
      assert.deepEqual(output.output, ['Item Alpha', 'Item Beta', 'Vienna: 12.5 degrees']);
      assert.deepEqual(output.quickReplies, [{ value: 'Beta', expressions: 'choice(b)' }]);
      assert.equal(output.httpCalls.weather.main.temp, 12.5);
      assert.equal(output.httpCalls.weatherRequest.method, 'GET');
      assert.equal(output.httpCalls.weatherRequest.uri, `${target.url}/weather?q=Vienna&units=metric`);
      assert.equal(output.httpCalls.weatherHeaders['x-served-by'], 'target');
      assert.equal(output.httpCalls.weatherHeaders['set-cookie'], undefined, 'credential headers are not stored');

      const temperature = answer.conversationProperties.temperature;
      assert.deepEqual(
        temperature,
        { name: 'temperature', value: 12.5, scope: 'conversation' },
        'a float stays a float',
      );
      assert.equal(answer.conversationProperties.city.value, 'Vienna');
      assert.deepEqual((entry(answer, 'httpCalls:weather') as any).main, { temp: 12.5, humidity: 80 });
    });

    it('POST with a templated JSON body; the target receives it', async () => {
      const conversationId = await start();
      await say(conversationId, 'weather', 'Graz');
      const received = target.next('/echo');
      const answer = await say(conversationId, 'submit', 'Linz');
      const request = await received;
      assert.equal(request.method, 'POST');
      assert.match(String(request.headers['content-type']), /^application\/json/);
      assert.equal(request.headers['x-conversation'], conversationId);
      assert.deepEqual(JSON.parse(request.body), { city: 'Linz', temperature: 12.5 });
      const output = answer.conversationOutputs.at(-1);
      assert.equal(output.httpCalls.submitted.method, 'POST');
      assert.equal(output.httpCalls.submitRequest.body, '{"city":"Linz","temperature":12.5}');
      assert.deepEqual(
        Object.keys(output.httpCalls).sort(),
        ['submitRequest', 'submitted'],
        'no response headers are kept for a call that names no object for them',
      );
    });

    it('a non-2xx answer stores the code and the error text; the turn goes on', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'broken', 'a b/..');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(target.hits('/missing/a%20b%2F%2E%2E').length, 1, 'values in the path are percent-encoded');
      assert.equal(entry(answer, 'httpCalls:brokenHttpCode'), 404);
      assert.equal(entry(answer, 'httpCalls:brokenError'), 'nothing at /missing/a%20b%2F%2E%2E');
      assert.equal(entry(answer, 'httpCalls:broken'), undefined);
      assert.deepEqual(answer.conversationOutputs.at(-1).output, ['Code 404']);
    });

    it('a target slower than timeoutInMillis ends the turn in ERROR with a clear log line; the next message is fine', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'slow');
      assert.equal(answer.conversationState, 'ERROR');
      assert.ok(
        block.server.logLines.some((line) => line.includes("HTTP call 'slow' failed: no answer within 300 ms")),
        'the log names the call and the cause',
      );
      const next = await say(conversationId, 'plain');
      assert.equal(next.conversationState, 'READY');
      assert.deepEqual(next.conversationOutputs.at(-1).output, ['Fine.']);
    });

    it('a refused connection ends the turn in ERROR', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'refused');
      assert.equal(answer.conversationState, 'ERROR');
      assert.ok(
        block.server.logLines.some((line) => line.includes("HTTP call 'refused' failed: the connection was refused")),
      );
    });

    it('the action httpcall(<name>) runs the call of that name', async () => {
      const conversationId = await start();
      const received = target.next('/echo');
      const answer = await say(conversationId, 'httpcall(ping)');
      assert.equal((await received).query.get('from'), 'ping');
      assert.equal(answer.conversationOutputs.at(-1).httpCalls.ping.method, 'GET');
    });

    it('retries on 503, then uses the successful answer', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'flaky');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(target.hits('/flaky').filter((hit) => hit.query.get('key') === conversationId).length, 3);
      assert.deepEqual(entry(answer, 'httpCalls:flaky'), { ok: true, attempts: 3 });
    });

    it('cuts a response at maxResponseSizeInBytes before storing it', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'big');
      assert.equal(answer.conversationState, 'READY');
      assert.equal(entry(answer, 'httpCalls:big'), 'x'.repeat(100));
    });

    it('fire-and-forget sends without waiting and stores only the request', async () => {
      const conversationId = await start();
      const received = target.next('/fire');
      const answer = await say(conversationId, 'fire', 'now');
      assert.equal(answer.conversationState, 'READY');
      assert.equal((await received).body, 'sent now');
      const calls = answer.conversationOutputs.at(-1).httpCalls;
      assert.deepEqual(Object.keys(calls), ['fireRequest']);
      assert.equal(calls.fireRequest.body, 'sent now');
    });

    it('follows redirects', async () => {
      const conversationId = await start();
      const answer = await say(conversationId, 'moved');
      assert.equal((entry(answer, 'httpCalls:moved') as any).name, 'Redirected');
    });

    it('batch requests: one request per element, the answers collected into a list', async () => {
      const conversationId = await start();
      const answer = await api.post(`/agents/${conversationId}?returnDetailed=true`, {
        json: {
          input: 'batch',
          context: { do: { type: 'string', value: 'batch' }, cities: { type: 'array', value: ['Rome', 'Oslo'] } },
        },
      });
      assert.equal(answer.status, 200, answer.text);
      const forecasts = entry(answer.json, 'httpCalls:forecasts') as Array<{ name: string }>;
      assert.deepEqual(
        forecasts.map((forecast) => forecast.name),
        ['Rome', 'Oslo'],
      );
      assert.equal((entry(answer.json, 'httpCalls:batchRequest') as unknown[]).length, 2);
    });

    it('keeps connections alive: several calls share one socket', async () => {
      const conversationId = await start();
      const before = target.received.length;
      for (const city of ['A', 'B', 'C', 'D']) await say(conversationId, 'weather', city);
      const sockets = new Set(target.received.slice(before).map((request) => request.socket));
      assert.equal(target.received.length - before, 4);
      assert.equal(sockets.size, 1);
    });

    it('resolves ${vault:...} in every field at run time and never stores the secret', async () => {
      const conversationId = await start();
      const received = target.next('/echo');
      const answer = await say(conversationId, 'secret', 'give me ${vault:apiToken}');
      const request = await received;
      assert.equal(request.headers.authorization, `Bearer ${API_TOKEN}`);
      assert.equal(request.headers['x-plain'], `p-${API_TOKEN}`);
      assert.equal(request.query.get('key'), API_TOKEN);
      assert.equal(
        request.body,
        'user said: give me ${vault:apiToken}',
        'a reference that came in through data is not resolved',
      );

      const record = answer.conversationOutputs.at(-1).httpCalls.secretRequest;
      assert.equal(record.headers.Authorization, '<REDACTED>');
      assert.equal(record.headers['X-Plain'], 'p-<REDACTED>');
      assert.equal(record.queryParams.key, '<REDACTED>');
      const conversation = await api.get(`/agents/${conversationId}?returnDetailed=true&returnCurrentStepOnly=false`);
      assert.equal(conversation.status, 200);
      assert.ok(
        !conversation.text.includes(API_TOKEN),
        'the secret is nowhere in the conversation (the echoed one is masked)',
      );
      assert.ok(!block.server.logLines.some((line) => line.includes(API_TOKEN)), 'nor in the log');
    });

    it('a post-response instruction with scope secret keeps a value of the response in the vault, never in the conversation', async () => {
      const conversationId = await start();
      const token = 'session-token-from-the-target-77aa';
      const answer = await say(conversationId, 'login', token);
      assert.equal(answer.conversationState, 'READY');
      assert.deepEqual(answer.conversationProperties.sessionToken, {
        name: 'sessionToken',
        value: `\${vault:${agentId}.sessionToken}`,
        scope: 'conversation',
      });
      const conversation = await api.get(`/agents/${conversationId}?returnDetailed=true&returnCurrentStepOnly=false`);
      assert.ok(!conversation.text.includes(token), 'the input and the saved response lose the value');
      const secrets = await api.get('/secretstore/secrets/default');
      assert.ok(
        secrets.json.some((secret: { name: string }) => secret.name === `${agentId}.sessionToken`),
        'the vault holds it',
      );
    });
  });

  describe(`HTTP calls with the URL guard on ${storeType}`, () => {
    const target = new Target();
    const block = serverOfBlock(storeType, { 'svc.security.ssrf-protection.enabled': true });
    const { api } = block;
    let agentId: string;

    before(async () => {
      await target.start();
      agentId = await buildAgent(api, target.url, `http://127.0.0.1:${await closedPort()}`);
    });
    after(async () => {
      await target.stop();
    });

    it('refuses a loopback target: the turn ends in ERROR and nothing reaches the target', async () => {
      const started = await api.post(`/agents/${agentId}/start`);
      const conversationId = started.json.conversationId as string;
      const answer = await api.post(`/agents/${conversationId}`, {
        json: { input: 'Vienna', context: { do: { type: 'string', value: 'weather' } } },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.conversationState, 'ERROR');
      assert.equal(target.received.length, 0);
      assert.ok(
        block.server.logLines.some((line) =>
          line.includes(
            "HTTP call 'weather' failed: The outbound request to '127.0.0.1' was refused: it is a loopback address",
          ),
        ),
      );
    });
  });
}
