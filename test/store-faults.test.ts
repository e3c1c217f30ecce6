import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startServer, type RunningServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';
import { PostgresCluster } from '../src/storage/postgres/cluster.ts';
import { createResource, deployAgent, onEveryMessage, startConversation } from './support/agents.ts';
import { client, type Answer } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { waitFor } from './support/process.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

/** An output set saying `text` on the action `reply`. */
const replyOutputs = (text: string) => ({
  outputSet: [{ action: 'reply', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text }] }] }],
});

/** The inputs of a conversation's stored steps (the start step has none), read through the API. */
async function storedInputs(api: ReturnType<typeof client>, conversationId: string): Promise<string[]> {
  const conversation = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
  assert.equal(conversation.status, 200, conversation.text);
  const outputs: Array<{ input?: unknown }> = conversation.json.conversationOutputs;
  return outputs.flatMap((output) => (typeof output.input === 'string' ? [output.input] : []));
}

function assertStoreProblem(answer: Answer): void {
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.match(answer.json.detail, /store cannot be reached/);
  assert.ok(Number(answer.headers.get('retry-after')) > 0, 'a Retry-After header');
  assert.ok(!answer.text.includes('postgres://'), 'no connection string in the problem');
}

/**
 * PostgreSQL going away and coming back while the service works (issue 19, item 5). The database server itself is
 * shared with other tests, so a TCP proxy in front of it is cut and restored instead of restarting it.
 */
describe('PostgreSQL taken away and brought back during turns', () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let server: RunningServer;
  let gate: Server;
  /** Settles when the gated HTTP call arrives; `release` answers it. */
  let gateArrived = Promise.withResolvers<void>();
  let release = () => {};
  const api = client(() => server.url);
  let plainAgent: string;
  let gatedAgent: string;

  before(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.port = String(proxy.port);
    server = await startServer(
      loadSettings(
        {},
        {
          'svc.http.port': 0,
          'svc.http.host': '127.0.0.1',
          'svc.datastore.type': 'postgres',
          'svc.datastore.postgres.url': url.toString(),
          'svc.datastore.postgres.query-timeout-millis': 1000,
          // Bounds a wait for a conversation's lock at 2 × (3 s + 1 s) + 1 s when the store stops answering
          'svc.conversations.turn-timeout-seconds': 3,
          'svc.conversations.claim-margin-millis': 1000,
          'svc.log.level': 'silent',
        },
      ),
      { logDestination: { write: () => {} } },
    );
    gate = createServer((_, response) => {
      release = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      gateArrived.resolve();
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
    const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
    const behavior = { type: 'svc://ai.svc.behavior', config: { uri: rules } };
    plainAgent = await deployAgent(api, { extensions: [behavior], outputSet: replyOutputs('Got it.') });
    const calls = await createResource(api, '/httpcallsstore/httpcalls', {
      targetServerUrl: gateUrl,
      httpCalls: [{ name: 'gate', actions: ['reply'], saveResponse: true, request: { method: 'GET', path: '/' } }],
    });
    gatedAgent = await deployAgent(api, {
      extensions: [behavior, { type: 'svc://ai.svc.httpcalls', config: { uri: calls } }],
      outputSet: replyOutputs('Checked.'),
    });
  });

  after(async () => {
    await server?.close();
    await proxy?.close();
    gate?.closeAllConnections();
    gate?.close();
    await database?.drop();
  });

  const ready = () =>
    waitFor(
      async () => ((await api.get('/q/health/ready')).status === 200 ? true : undefined),
      'the readiness check to pass again',
    );

  it('a turn whose store goes away while it runs answers 503 and is not stored; the next turn works', async () => {
    const { conversationId } = await startConversation(api, gatedAgent);
    gateArrived = Promise.withResolvers<void>();
    const inFlight = api.post(`/agents/${conversationId}`, { json: { input: 'first' } });
    await gateArrived.promise;
    await proxy.cut();
    release();
    assertStoreProblem(await inFlight);
    assertStoreProblem(await api.get(`/agents/${conversationId}`));
    const notReady = await api.get('/q/health/ready');
    assert.equal(notReady.status, 503, 'the readiness check fails while the store is away');

    await proxy.restore();
    await ready();
    gateArrived = Promise.withResolvers<void>();
    const next = api.post(`/agents/${conversationId}`, { json: { input: 'second' } });
    await gateArrived.promise;
    release();
    const answered = await next;
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual(answered.json.conversationOutputs.at(-1).output, ['Checked.']);
    assert.deepEqual(await storedInputs(api, conversationId), ['second'], 'the failed turn left nothing behind');
  });

  it('a store that stops answering (connections open, nothing passes) answers 503 within the query timeout; then turns work again', async () => {
    const { conversationId } = await startConversation(api, plainAgent);
    const before = await api.post(`/agents/${conversationId}`, { json: { input: 'before' } });
    assert.equal(before.status, 200, before.text);
    proxy.freeze();
    try {
      assertStoreProblem(await api.get(`/agents/${conversationId}`));
      assertStoreProblem(await api.post(`/agents/${conversationId}`, { json: { input: 'frozen' } }));
    } finally {
      proxy.thaw();
    }
    await ready();
    const after = await api.post(`/agents/${conversationId}`, { json: { input: 'after' } });
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(await storedInputs(api, conversationId), ['before', 'after']);
  });

  it('under load: every answer is 200 or a 503 problem, acknowledged turns are all stored, none half-written', async () => {
    const workers = 6;
    const conversations = await Promise.all(
      Array.from({ length: workers }, async () => (await startConversation(api, plainAgent)).conversationId as string),
    );
    const sent = conversations.map(() => new Map<string, number>());
    const failed = conversations.map(() => 0);
    let phase: 'before' | 'cut' | 'after' = 'before';
    const unexpected: string[] = [];
    const worker = async (index: number) => {
      const conversationId = conversations[index]!;
      let succeededAfter = 0;
      for (let n = 0; succeededAfter < 5; n++) {
        const input = `message ${n}`;
        const answer = await api.post(`/agents/${conversationId}`, {
          json: { input },
          headers: { 'idempotency-key': `${conversationId}-${n}` },
        });
        sent[index]!.set(input, answer.status);
        if (answer.status === 503) {
          assertStoreProblem(answer);
          failed[index]!++;
          // A client backs off as Retry-After says; the test only waits a little
          await new Promise((resolve) => setTimeout(resolve, 20));
        } else if (answer.status !== 200) unexpected.push(`${answer.status} ${answer.text}`);
        else if (phase === 'after') succeededAfter++;
        else if (phase === 'before' && n >= 3) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const running = Promise.all(conversations.map((_, index) => worker(index)));
    await waitFor(() => ([...sent].every((messages) => messages.size >= 3) ? true : undefined), 'some turns');
    phase = 'cut';
    await proxy.cut();
    await waitFor(() => (failed.every((count) => count > 0) ? true : undefined), 'every conversation to see a 503');
    await proxy.restore();
    await ready();
    phase = 'after';
    await running;
    assert.deepEqual(unexpected, [], 'no other status than 200 and 503');

    for (const [index, conversationId] of conversations.entries()) {
      const stored = await storedInputs(api, conversationId);
      assert.equal(new Set(stored).size, stored.length, 'no turn stored twice');
      for (const [input, status] of sent[index]!) {
        if (status === 200) assert.ok(stored.includes(input), `acknowledged '${input}' is stored`);
      }
    }
    // Straight from the database: every conversation's step count matches its steps, every step is whole JSON
    const direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ id: string; step_count: number; steps: number }>(
        `SELECT c.id, c.step_count, count(s.step_index)::int AS steps FROM conversations c
           LEFT JOIN conversation_steps s ON s.conversation_id = c.id GROUP BY c.id, c.step_count`,
      );
      for (const row of rows) assert.equal(row.steps, row.step_count, `conversation ${row.id}: steps match the count`);
      const bodies = await direct.query<{ body: string }>('SELECT body FROM conversation_steps');
      for (const { body } of bodies.rows) JSON.parse(body);
    } finally {
      await direct.end();
    }
  });
});

describe('PostgreSQL notifications after the store comes back', () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let cluster: PostgresCluster;

  before(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.port = String(proxy.port);
    cluster = new PostgresCluster(url.toString());
  });

  after(async () => {
    await cluster?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('the listening connection is made again, also when the first attempts fail while the store is away', async () => {
    const received: string[] = [];
    cluster.subscribe('svc_fault_test', (payload) => received.push(payload));
    await cluster.ready();
    const notify = async (payload: string) => {
      const direct = new pg.Client({ connectionString: database.url });
      await direct.connect();
      await direct.query('SELECT pg_notify($1, $2)', ['svc_fault_test', payload]);
      await direct.end();
    };
    await notify('before');
    await waitFor(() => (received.includes('before') ? true : undefined), 'the first notification');

    const connectionsBefore = proxy.connectionsMade;
    await proxy.cut();
    // Stay away until the service has tried to listen again (and failed): its retries must go on
    await waitFor(
      async () =>
        (await cluster.withConversationLock('c', 1000, async () => true).catch(() => false)) ? undefined : true,
      'a refused connection',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await proxy.restore();
    await waitFor(() => (proxy.connectionsMade > connectionsBefore ? true : undefined), 'a new connection');
    // Notify until one arrives: a notification sent before LISTEN is issued again is lost, as the class says
    await waitFor(async () => {
      await notify('after');
      await new Promise((resolve) => setTimeout(resolve, 100));
      return received.includes('after') ? true : undefined;
    }, 'a notification after the store came back');
  });
});
