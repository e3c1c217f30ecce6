import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createResource, deployAgent, idFromLocation } from './support/agents.ts';
import { call, client } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { startServiceProcess, waitFor, type ServiceProcess } from './support/process.ts';

/**
 * An instance that dies (SIGKILL) or hangs (SIGSTOP) in the middle of a turn does not block its conversation:
 * the other instances go on serving it, and nothing acknowledged is lost.
 */
describe('instances failing in the middle of a turn', () => {
  let database: { url: string; drop(): Promise<void> };
  let target: Server;
  let targetUrl: string;
  const instances: ServiceProcess[] = [];
  let agentId: string;
  /** Settles when the target receives the slow call: the turn making it holds the conversation's lock. */
  let slowCallArrived = Promise.withResolvers<void>();

  const startInstance = async () => {
    const instance = startServiceProcess({
      SVC_HTTP_PORT: '0',
      SVC_DATASTORE_TYPE: 'postgres',
      SVC_DATASTORE_POSTGRES_URL: database.url,
      SVC_CONVERSATIONS_TURN_TIMEOUT_SECONDS: '2',
      SVC_CONVERSATIONS_CLAIM_MARGIN_MILLIS: '1000',
    });
    instances.push(instance);
    return { instance, url: await instance.listening() };
  };

  before(async () => {
    database = await createTestDatabase();
    // The HTTP target of the agent: `/slow` answers after 30 s, anything else at once.
    target = createServer((request, response) => {
      const delay = request.url?.startsWith('/slow') ? 30_000 : 0;
      if (delay > 0) slowCallArrived.resolve();
      const timer = setTimeout(
        () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
        delay,
      );
      response.on('close', () => clearTimeout(timer));
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;

    const { url } = await startInstance();
    const api = client(() => url);
    const create = (path: string, body: unknown) => createResource(api, path, body);
    const dictionary = await create('/regulardictionarystore/regulardictionaries', {
      words: [
        { word: 'slow', expressions: 'speed(slow)' },
        { word: 'fast', expressions: 'speed(fast)' },
      ],
    });
    const rules = await create('/behaviorstore/behaviorsets', {
      behaviorGroups: [
        {
          name: 'g',
          behaviorRules: [
            {
              name: 'slow',
              actions: ['go_slow'],
              conditions: [{ type: 'inputmatcher', configs: { expressions: 'speed(slow)' } }],
            },
            {
              name: 'fast',
              actions: ['go_fast'],
              conditions: [{ type: 'inputmatcher', configs: { expressions: 'speed(fast)' } }],
            },
          ],
        },
      ],
    });
    const calls = await create('/httpcallsstore/httpcalls', {
      targetServerUrl: targetUrl,
      httpCalls: [
        {
          name: 'slowCall',
          actions: ['go_slow'],
          saveResponse: true,
          responseObjectName: 'slow',
          timeoutInMillis: 60_000,
          request: { method: 'GET', path: '/slow' },
        },
        {
          name: 'fastCall',
          actions: ['go_fast'],
          saveResponse: true,
          responseObjectName: 'fast',
          request: { method: 'GET', path: '/fast' },
        },
      ],
    });
    agentId = await deployAgent(api, {
      extensions: [
        {
          type: 'svc://ai.svc.parser',
          extensions: {
            dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionary } }],
          },
          config: {},
        },
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
      ],
    });
  });

  after(async () => {
    await Promise.all(
      instances.map((instance) => {
        if (instance.child.signalCode === 'SIGSTOP' || instance.child.exitCode === null) instance.child.kill('SIGCONT');
        return instance.stop('SIGKILL');
      }),
    );
    target?.closeAllConnections();
    target?.close();
    await database?.drop();
  });

  /** Turns waiting for a conversation's lock in the test database (advisory locks not granted yet). */
  const lockWaiters = async (): Promise<number> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const result = await client.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_locks
          WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return result.rows[0]!.waiting;
    } finally {
      await client.end();
    }
  };

  for (const failure of ['SIGKILL', 'SIGSTOP'] as const) {
    it(`${failure} of the instance running a turn: another instance serves the conversation next, nothing acknowledged is lost`, async () => {
      const doomed = await startInstance();
      const survivor = await startInstance();
      const started = await call(survivor.url, 'POST', `/agents/${agentId}/start`);
      assert.equal(started.status, 201, started.text);
      const conversationId = idFromLocation(started.headers.get('location'));
      const acknowledged = await call(doomed.url, 'POST', `/agents/${conversationId}`, { json: { input: 'fast' } });
      assert.equal(acknowledged.status, 200, acknowledged.text);

      slowCallArrived = Promise.withResolvers<void>();
      const inFlight = call(doomed.url, 'POST', `/agents/${conversationId}`, { json: { input: 'slow' } }).catch(
        (error: Error) => error,
      );
      await slowCallArrived.promise;
      const queued = call(survivor.url, 'POST', `/agents/${conversationId}`, { json: { input: 'fast' } });
      await waitFor(
        async () => ((await lockWaiters()) > 0 ? true : undefined),
        'the queued turn to wait for the lock',
        () => '',
        5_000,
      );
      doomed.instance.child.kill(failure);

      const answer = await queued;
      assert.equal(answer.status, 200, answer.text);
      const history = await call(
        survivor.url,
        'GET',
        `/agents/${conversationId}?returnCurrentStepOnly=false&returnDetailed=true`,
      );
      const inputs = history.json.conversationOutputs.slice(1).map((output: { input: string }) => output.input);
      assert.deepEqual(inputs, ['fast', 'fast'], 'the acknowledged turn is kept, the unfinished one left no trace');
      if (failure === 'SIGKILL')
        assert.ok((await inFlight) instanceof Error, 'the client of the dead instance got no answer');
      if (failure === 'SIGSTOP') doomed.instance.child.kill('SIGCONT');
    });
  }
});
