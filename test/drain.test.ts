import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createResource, deployAgent, onEveryMessage, startConversation } from './support/agents.ts';
import { call, client } from './support/http.ts';
import { startServiceProcess, waitFor, type ServiceProcess } from './support/process.ts';

/**
 * Graceful drain (issue 19 item 4) with the service as its own process (`node src/main.ts`) under load: every
 * message calls a loopback backend that holds its answer until the test lets go, so turns are running and queued
 * when SIGTERM arrives. Then readiness fails, new requests get 503 with Retry-After and a problem body, the turns
 * in flight finish and are acknowledged, and the process exits 0. Restarted over the same store, every acknowledged
 * turn is there, whole, and nothing else.
 */

/** The agents' backend: answers `{echo: q}`, holding every answer while `holding`. */
class Backend {
  readonly #server = createServer((request, response) => this.#answer(request.url ?? '/', response));
  readonly #held: Array<() => void> = [];
  #holding = true;
  received = 0;
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  release(): void {
    this.#holding = false;
    for (const answer of this.#held.splice(0)) answer();
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(url: string, response: ServerResponse): void {
    this.received++;
    const echo = new URL(url, 'http://backend').searchParams.get('q');
    const answer = () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ echo }));
    };
    if (this.#holding) this.#held.push(answer);
    else answer();
  }
}

/** A message that may meet a draining or stopped service: its status, or `refused` when nothing listens any more. */
async function trySend(url: string, conversationId: string, input: string): Promise<number | 'refused'> {
  try {
    const answer = await call(url, 'POST', `/agents/${conversationId}`, { json: { input } });
    if (answer.status === 503) {
      assert.equal(answer.headers.get('retry-after'), '5');
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(answer.json.status, 503);
      assert.match(answer.json.detail, /shutting down/);
    } else {
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json.conversationOutputs.at(-1).output, [`Got ${input}`]);
    }
    return answer.status;
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    return 'refused';
  }
}

/** An agent whose every message calls the backend with its input and answers `Got <the backend's echo>`. */
async function deployBackendAgent(api: ReturnType<typeof client>, backendUrl: string): Promise<string> {
  return deployAgent(api, {
    extensions: [
      {
        type: 'svc://ai.svc.behavior',
        config: { uri: await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('slow')) },
      },
      {
        type: 'svc://ai.svc.httpcalls',
        config: {
          uri: await createResource(api, '/httpcallsstore/httpcalls', {
            targetServerUrl: backendUrl,
            httpCalls: [
              {
                name: 'slow',
                actions: ['slow'],
                saveResponse: true,
                responseObjectName: 'slow',
                request: { path: '/slow', queryParams: { q: '{memory.current.input}' } },
              },
            ],
          }),
        },
      },
    ],
    outputSet: {
      outputSet: [
        {
          action: 'slow',
          timesOccurred: 0,
          outputs: [{ valueAlternatives: [{ type: 'text', text: 'Got {memory.current.httpCalls.slow.echo}' }] }],
        },
      ],
    },
    moreWorkflows: [[{ type: 'svc://ai.svc.templating', config: {} }]],
  });
}

describe('graceful drain of the service process', () => {
  let dir: string;
  const backend = new Backend();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-drain-'));
    await backend.start();
  });
  after(async () => {
    await backend.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const environment = (database = 'svc.db', drainSeconds = 120) => ({
    SVC_HTTP_PORT: '0',
    SVC_DATASTORE_SQLITE_PATH: join(dir, database),
    SVC_SHUTDOWN_DRAIN_TIMEOUT_SECONDS: String(drainSeconds),
    SVC_LOG_LEVEL: 'trace',
  });

  it('fails readiness, refuses new requests with 503, finishes every turn in flight, exits 0, loses nothing', async () => {
    let service: ServiceProcess | undefined = startServiceProcess(environment());
    try {
      const url = await service.listening();
      const api = client(() => url);
      const agentId = await deployBackendAgent(api, backend.url);

      // Load: eight clients, each on its own conversation, sending one message after the other until refused;
      // two more messages queue behind the first ones of two conversations.
      const conversations: string[] = [];
      for (let i = 0; i < 8; i++) conversations.push((await startConversation(api, agentId)).conversationId);
      const answers = new Map<string, Array<{ input: string; status: number | 'refused' }>>(
        conversations.map((id) => [id, []]),
      );
      const clients = conversations.map(async (id) => {
        for (let n = 1; ; n++) {
          const input = `${id.slice(-4)}-${n}`;
          const status = await trySend(url, id, input);
          answers.get(id)!.push({ input, status });
          if (status !== 200) return;
        }
      });
      await waitFor(() => (backend.received >= 8 ? true : undefined), 'eight turns waiting for the backend');
      const queued = [conversations[0]!, conversations[1]!].map(async (id) => {
        const input = `${id.slice(-4)}-queued`;
        answers.get(id)!.push({ input, status: await trySend(url, id, input) });
      });
      // The queued ones have reached the service once it logs them (at trace level, as each request arrives).
      const arrivals = (id: string) => service!.output().split(`"url":"/agents/${id}"`).length - 1;
      await waitFor(
        () => (arrivals(conversations[0]!) >= 2 && arrivals(conversations[1]!) >= 2 ? true : undefined),
        'the queued messages to arrive',
      );

      const exited = service.stop('SIGTERM');
      await waitFor(() => (service!.output().includes('SIGTERM received') ? true : undefined), 'the drain to begin');

      // While the turns wait: not ready (still alive), and new requests are refused with 503 + Retry-After.
      const ready = await call(url, 'GET', '/q/health/ready');
      assert.equal(ready.status, 503);
      assert.equal(ready.json.status, 'DOWN');
      assert.deepEqual(ready.json.checks, [{ name: 'drain', status: 'DOWN', reason: 'the service is shutting down' }]);
      assert.equal((await call(url, 'GET', '/q/health/live')).status, 200);
      assert.equal(await trySend(url, conversations[2]!, 'too late'), 503);
      const read = await call(url, 'GET', `/agents/${conversations[2]}`);
      assert.equal(read.status, 503);
      assert.equal(read.headers.get('retry-after'), '5');
      const started = await call(url, 'POST', `/agents/${agentId}/start`);
      assert.equal(started.status, 503);

      backend.release();
      await Promise.all([...clients, ...queued]);
      assert.equal(await exited, 0, service.output());
      assert.match(service.output(), /drained: no turn or write in flight/);
      assert.equal(await trySend(url, conversations[0]!, 'after exit'), 'refused');

      // Each client's first message was in flight when the drain began: acknowledged. What came later was refused.
      // Later ones met the drain (503) or, once the process had exited, nothing listening.
      for (const id of conversations) {
        const statuses = answers
          .get(id)!
          .filter((answer) => !answer.input.endsWith('queued'))
          .map((answer) => answer.status);
        assert.equal(statuses[0], 200, `the turn in flight on ${id} finished: ${statuses}`);
        assert.equal(statuses.length, 2, String(statuses));
        assert.ok(statuses[1] === 503 || statuses[1] === 'refused', String(statuses));
      }
      for (const id of conversations.slice(0, 2)) {
        assert.equal(answers.get(id)!.find((answer) => answer.input.endsWith('queued'))?.status, 200, 'queued turn');
      }

      // Restarted over the same store: exactly the acknowledged turns, each whole (its backend answer in its output).
      service = startServiceProcess(environment());
      const again = await service.listening();
      for (const id of conversations) {
        const stored = await call(again, 'GET', `/agents/${id}?returnCurrentStepOnly=false`);
        assert.equal(stored.status, 200, stored.text);
        const acknowledged = answers
          .get(id)!
          .filter((answer) => answer.status === 200)
          .map((answer) => answer.input);
        const outputs = stored.json.conversationOutputs.slice(1);
        assert.deepEqual(outputs.map((output: any) => output.input).sort(), [...acknowledged].sort());
        for (const output of outputs) assert.deepEqual(output.output, [`Got ${output.input}`]);
      }
    } finally {
      await service?.stop('SIGTERM');
    }
  });

  it('stops after the drain timeout when a turn does not finish; that turn is not answered, nothing is half-written', async () => {
    const stuck = new Backend();
    await stuck.start();
    let service: ServiceProcess | undefined = startServiceProcess(environment('stuck.db', 1));
    try {
      const url = await service.listening();
      const api = client(() => url);
      const agentId = await deployBackendAgent(api, stuck.url);
      const { conversationId } = await startConversation(api, agentId);
      const inFlight = trySend(url, conversationId, 'never answered');
      await waitFor(() => (stuck.received >= 1 ? true : undefined), 'the turn to wait for the backend');
      const exited = service.stop('SIGTERM');
      assert.equal(await exited, 0, service.output());
      assert.match(service.output(), /drain timed out/);
      assert.equal(await inFlight, 'refused', 'the connection of the unfinished turn was cut, never answered');

      service = startServiceProcess(environment('stuck.db', 1));
      const again = await service.listening();
      const stored = await call(again, 'GET', `/agents/${conversationId}?returnCurrentStepOnly=false`);
      assert.equal(stored.status, 200, stored.text);
      // The cut turn was never answered. Its backend call failed once the service closed its outbound connections;
      // if it still got to commit before the store closed, it is there whole (one step, committed at once), else not.
      const outputs = stored.json.conversationOutputs;
      assert.ok(outputs.length === 1 || (outputs.length === 2 && outputs[1].input === 'never answered'), stored.text);
      assert.ok(['READY', 'ERROR'].includes(stored.json.conversationState), stored.text);
    } finally {
      await service?.stop('SIGTERM');
      await stuck.stop();
    }
  });
});
