import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { createLogBuffer, teeDestination, type LogBuffer } from '../ops/log-buffer.ts';
import { createMetrics, instrumentStorage, type Metrics } from '../ops/metrics.ts';
import type { ConfigResourceStore, Storage } from '../storage/ports.ts';
import { httpMetricsHook, operationsRoutes } from './operations.ts';
import { stubStorage } from '../../test/support/stub-storage.ts';

function fakeStorage(ping: () => Promise<void>): Storage {
  return stubStorage({
    resources: { read: async () => undefined } as unknown as ConfigResourceStore,
    ping,
    transaction: () => Promise.reject(new Error('the operations routes use no transactions')),
  });
}

const logLine = (level: number, msg: string, extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ level, time: Date.now(), pid: 1, hostname: 'h', msg, ...extra })}\n`;

interface Built {
  app: FastifyInstance;
  metrics: Metrics;
  logBuffer: LogBuffer;
}

async function build(
  options: { ping?: () => Promise<void>; readinessTimeoutMs?: number; heartbeatMs?: number } = {},
): Promise<Built> {
  const app = Fastify();
  // stands in for the lead's shared error handler
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof AppError && error.kind === 'invalid') {
      return reply.code(400).type('application/problem+json').send({ status: 400, detail: error.message });
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    return reply.code(status).send({ status, detail: (error as Error).message });
  });
  const metrics = createMetrics();
  const logBuffer = createLogBuffer(100);
  app.addHook('onResponse', httpMetricsHook(metrics));
  await app.register(operationsRoutes, {
    storage: fakeStorage(options.ping ?? (async () => {})),
    metrics,
    logBuffer,
    ...(options.readinessTimeoutMs === undefined ? {} : { readinessTimeoutMs: options.readinessTimeoutMs }),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
  });
  await app.ready();
  return { app, metrics, logBuffer };
}

describe('operations routes', () => {
  const apps: FastifyInstance[] = [];
  const make = async (options?: Parameters<typeof build>[0]) => {
    const built = await build(options);
    apps.push(built.app);
    return built;
  };
  after(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('answers liveness', async () => {
    const { app } = await make();
    const response = await app.inject({ method: 'GET', url: '/q/health/live' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'UP', checks: [] });
  });

  it('answers readiness UP when the store answers', async () => {
    const { app } = await make();
    const response = await app.inject({ method: 'GET', url: '/q/health/ready' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'UP', checks: [{ name: 'store', status: 'UP' }] });
  });

  it('answers readiness 503 DOWN without the error text when the store fails', async () => {
    const { app } = await make({
      ping: async () => {
        throw new Error('connect ECONNREFUSED postgres://svc:secret@db:5432/svc');
      },
    });
    const response = await app.inject({ method: 'GET', url: '/q/health/ready' });
    assert.equal(response.statusCode, 503);
    const body = response.json();
    assert.equal(body.status, 'DOWN');
    assert.equal(body.checks[0].name, 'store');
    assert.equal(body.checks[0].status, 'DOWN');
    assert.doesNotMatch(response.body, /secret|postgres:/);
  });

  it('answers readiness 503 when the store does not answer in time', async () => {
    const { app } = await make({ ping: () => new Promise(() => {}), readinessTimeoutMs: 50 });
    const response = await app.inject({ method: 'GET', url: '/q/health/ready' });
    assert.equal(response.statusCode, 503);
  });

  it('exposes Prometheus metrics including HTTP requests by route pattern', async () => {
    const { app, metrics } = await make();
    const storage = instrumentStorage(
      fakeStorage(async () => {}),
      metrics,
    );
    await storage.resources.read('agent', 'x', 1);
    await app.inject({ method: 'GET', url: '/q/health/live' });
    await app.inject({ method: 'GET', url: '/no/such/path' });
    const response = await app.inject({ method: 'GET', url: '/q/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(response.body, /^# HELP /m);
    assert.match(response.body, /svc_store_operations_total\{kind="agent",operation="read",outcome="ok"\} 1/);
    assert.match(
      response.body,
      /svc_http_server_requests_seconds_count\{method="GET",route="\/q\/health\/live",status="200"\} 1/,
    );
    assert.match(
      response.body,
      /svc_http_server_requests_seconds_count\{method="GET",route="unmatched",status="404"\} 1/,
    );
    assert.doesNotMatch(response.body, /no\/such\/path/);
  });

  it('lists recent log entries with level, search, limit, agent and conversation filters', async () => {
    const { app, logBuffer } = await make();
    logBuffer.write(logLine(20, 'debug detail'));
    logBuffer.write(logLine(30, 'Agent deployed', { agentId: 'a1', agentVersion: 2 }));
    logBuffer.write(logLine(40, 'slow turn', { agentId: 'a1', conversationId: 'c1', reqId: 'r1' }));
    logBuffer.write(logLine(50, 'deploy failed', { agentId: 'a2', userId: null }));

    const all = await app.inject({ method: 'GET', url: '/administration/logs' });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(
      all.json().map((e: { message: string }) => e.message),
      ['Agent deployed', 'slow turn', 'deploy failed'],
    );
    const slow = all.json()[1];
    assert.equal(slow.level, 'WARN');
    assert.equal(slow.reqId, 'r1', 'other fields are kept');
    assert.equal(typeof slow.timestamp, 'number');
    assert.equal('userId' in all.json()[2], false);

    const query = async (qs: string) =>
      (await app.inject({ method: 'GET', url: `/administration/logs?${qs}` }))
        .json()
        .map((e: { message: string }) => e.message);
    assert.deepEqual(await query('level=debug'), ['debug detail', 'Agent deployed', 'slow turn', 'deploy failed']);
    assert.deepEqual(await query('level=WARN'), ['slow turn', 'deploy failed']);
    assert.deepEqual(await query('search=DEPLOY'), ['Agent deployed', 'deploy failed']);
    assert.deepEqual(await query('limit=1'), ['deploy failed']);
    assert.deepEqual(await query('agentId=a1'), ['Agent deployed', 'slow turn']);
    assert.deepEqual(await query('conversationId=c1'), ['slow turn']);
  });

  it('refuses a bad level or limit with 400', async () => {
    const { app } = await make();
    const badLevel = await app.inject({ method: 'GET', url: '/administration/logs?level=LOUD' });
    assert.equal(badLevel.statusCode, 400);
    assert.match(badLevel.json().detail, /level/);
    const badLimit = await app.inject({ method: 'GET', url: '/administration/logs?limit=-3' });
    assert.equal(badLimit.statusCode, 400);
    const badStream = await app.inject({ method: 'GET', url: '/administration/logs/stream?level=LOUD' });
    assert.equal(badStream.statusCode, 400);
  });

  it("feeds the buffer from Fastify's own logger through teeDestination", async () => {
    const logBuffer = createLogBuffer(100);
    const written: string[] = [];
    const app = Fastify({
      logger: { level: 'info', stream: teeDestination(logBuffer, { write: (line: string) => written.push(line) }) },
    });
    apps.push(app);
    await app.register(operationsRoutes, { storage: fakeStorage(async () => {}), metrics: createMetrics(), logBuffer });
    app.log.warn({ agentId: 'a9' }, 'from the app logger');
    await app.inject({ method: 'GET', url: '/q/health/live' });
    const messages = logBuffer.recent().map((entry) => entry.message);
    assert.ok(messages.includes('from the app logger'));
    assert.ok(messages.includes('incoming request'));
    assert.equal(logBuffer.recent({ agentId: 'a9' })[0]?.level, 'WARN');
    assert.ok(written.length >= 3);
  });
});

async function readEvents(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<unknown[]> {
  const decoder = new TextDecoder();
  let text = '';
  const events: unknown[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let boundary = text.indexOf('\n\n');
    while (boundary >= 0) {
      const block = text.slice(0, boundary);
      text = text.slice(boundary + 2);
      for (const line of block.split('\n')) {
        if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
      }
      boundary = text.indexOf('\n\n');
    }
  }
  return events;
}

describe('log stream (SSE over a real socket)', () => {
  it('sends recent matching entries, then live ones, and unsubscribes on disconnect', async () => {
    const { app, logBuffer } = await build({});
    try {
      logBuffer.write(logLine(30, 'old info'));
      logBuffer.write(logLine(50, 'old error'));
      logBuffer.write(logLine(50, 'other error'));
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const controller = new AbortController();
      const response = await fetch(`${address}/administration/logs/stream?level=error&search=OLD`, {
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      assert.match(String(response.headers.get('content-type')), /^text\/event-stream/);
      const reader = response.body!.getReader();

      const backlog = await readEvents(reader, 1);
      assert.deepEqual(
        backlog.map((e) => (e as { message: string }).message),
        ['old error'],
      );

      logBuffer.write(logLine(30, 'old but only info'));
      logBuffer.write(logLine(60, 'old and fatal', { conversationId: 'c1' }));
      const live = await readEvents(reader, 1);
      assert.deepEqual(
        live.map((e) => (e as { message: string; level: string }).level),
        ['FATAL'],
      );
      assert.equal((live[0] as { conversationId: string }).conversationId, 'c1');
      assert.equal(logBuffer.subscriberCount, 1);

      controller.abort();
      await reader.cancel().catch(() => {});
      // the server sees the disconnect and unsubscribes
      for (let i = 0; i < 100 && logBuffer.subscriberCount > 0; i += 1)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(logBuffer.subscriberCount, 0);
      logBuffer.write(logLine(60, 'old after disconnect'));
    } finally {
      const started = Date.now();
      await app.close();
      assert.ok(Date.now() - started < 2000);
    }
  });

  it('sends heartbeats and does not block graceful shutdown while a stream is open', async () => {
    const { app, logBuffer } = await build({ heartbeatMs: 20 });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${address}/administration/logs/stream`);
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': heartbeat\n\n')) text += decoder.decode((await reader.read()).value, { stream: true });
    assert.equal(logBuffer.subscriberCount, 1);
    const started = Date.now();
    await app.close();
    assert.ok(Date.now() - started < 2000, 'close finished promptly');
    assert.equal(logBuffer.subscriberCount, 0);
    // the server ended the stream
    let done = false;
    while (!done) done = (await reader.read()).done;
  });
});
