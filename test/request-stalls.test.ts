import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentExample } from './fixtures/resources.ts';
import { client } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { type ServiceProcess, startServiceProcess, waitFor } from './support/process.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** How long the health check may take while another request is being answered: far above normal, far below a stall. */
const HEALTH_PATIENCE_MS = 5_000;

async function healthAnswers(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/q/health/live`, { signal: AbortSignal.timeout(HEALTH_PATIENCE_MS) });
  await response.body?.cancel();
  return response.status;
}

// The server runs in a process of its own: a request that blocks its event loop must not block the test's clock.
for (const storeType of storeTypes) {
  describe(`descriptor filters on ${storeType} (issue 13: ReDoS)`, () => {
    let service: ServiceProcess;
    let baseUrl = '';
    let removeStore: () => Promise<void> = async () => {};
    const api = client(() => baseUrl);

    before(async () => {
      let env: Record<string, string>;
      if (storeType === 'sqlite') {
        const dir = await mkdtemp(join(tmpdir(), 'svc-redos-'));
        env = { SVC_DATASTORE_TYPE: 'sqlite', SVC_DATASTORE_SQLITE_PATH: join(dir, 'svc.db') };
        removeStore = () => rm(dir, { recursive: true, force: true });
      } else {
        const database = await createTestDatabase();
        env = { SVC_DATASTORE_TYPE: 'postgres', SVC_DATASTORE_POSTGRES_URL: database.url };
        removeStore = database.drop;
      }
      service = startServiceProcess({ ...env, SVC_HTTP_PORT: '0' });
      baseUrl = await service.listening();
    });
    after(async () => {
      // SIGKILL: a server still stuck in a backtracking match would not see a SIGTERM for a minute.
      await service?.stop('SIGKILL');
      await removeStore();
    });

    it('a catastrophic-backtracking pattern is plain text: the server keeps answering', async () => {
      // Every descriptor id is 24 hex digits, which this pattern, as a regular expression, takes minutes to reject.
      assert.equal((await api.post('/agentstore/agents', { json: agentExample })).status, 201);
      const evil = encodeURIComponent('^([0-9a-f]+[0-9a-f]?)+z$');
      const listing = api.get(`/agentstore/agents/descriptors?filter=${evil}`);
      listing.catch(() => undefined); // awaited below; a stuck server must fail the test, not the run
      assert.equal(await healthAnswers(baseUrl), 200, 'the health check answers while the filter runs');
      const answer = await listing;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json, [], 'no name, description or id contains that text');
    });
  });
}

/** A raw connection from `localAddress` (any 127.x.y.z is this machine: each one is a client address of its own). */
async function openSocket(baseUrl: string, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(baseUrl).port), localAddress });
  socket.on('error', () => undefined); // a refused connection is reset; the test looks at 'close'
  await once(socket, 'connect');
  socket.resume(); // read, so that the server closing it is seen
  return socket;
}

/** Whether the server closes the socket within `ms` (far longer than the lowered timeouts, far shorter than a stall). */
async function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.closed) return true;
  let timer: NodeJS.Timeout | undefined;
  // Not `once(socket, 'close')`: it rejects on the 'error' (a reset, a write into the closed socket) that comes first.
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const outcome = await Promise.race([closed, gaveUp]);
  clearTimeout(timer);
  return outcome;
}

/** GET over a connection of its own from `localAddress`; the status, or 0 when the connection is refused. */
function getFrom(baseUrl: string, path: string, localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => {
    const request = httpGet(`${baseUrl}${path}`, { agent: false, localAddress }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

describe('slow clients are cut off (issue 13)', () => {
  const block = serverOfBlock('sqlite', {
    'svc.http.headers-timeout-millis': 300,
    'svc.http.request-timeout-millis': 800,
  });

  it('a body trickled byte by byte answers 408 and is closed; the health check answers meanwhile', async () => {
    const socket = await openSocket(block.server.url);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.write(
      'POST /regulardictionarystore/regulardictionaries HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    const trickle = setInterval(() => socket.writable && socket.write(' '), 50);
    try {
      assert.equal(await healthAnswers(block.server.url), 200);
      assert.ok(await closedWithin(socket, 10_000), 'the trickling connection is closed');
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /content-type: application\/problem\+json/i);
    assert.match(answer, /"status":408/);
  });

  it('headers trickled byte by byte, or never sent, are cut off too', async () => {
    const trickling = await openSocket(block.server.url);
    trickling.write('GET /q/health/live HTTP/1.1\r\nX-Slow: ');
    const trickle = setInterval(() => trickling.writable && trickling.write('a'), 50);
    const silent = await openSocket(block.server.url);
    try {
      assert.ok(await closedWithin(trickling, 10_000), 'the connection trickling headers is closed');
      assert.ok(await closedWithin(silent, 10_000), 'the silent connection is closed');
    } finally {
      clearInterval(trickle);
      trickling.destroy();
      silent.destroy();
    }
  });
});

describe('connections are capped per client address and in total (issue 13)', () => {
  const block = serverOfBlock('sqlite', {
    'svc.http.max-connections-per-address': 3,
    'svc.http.max-connections': 6,
  });

  it('a client over its share is closed at once while another keeps being served', async () => {
    const greedy = await Promise.all(Array.from({ length: 5 }, () => openSocket(block.server.url, '127.0.0.2')));
    try {
      const closed = await Promise.all(greedy.map((socket) => closedWithin(socket, 1_000)));
      assert.deepEqual(closed, [false, false, false, true, true], 'the connections beyond 3 are closed');
      assert.equal(await getFrom(block.server.url, '/q/health/live'), 200, 'another address is served');
      // The greedy client's own connections within its share still work.
      let answer = '';
      greedy[0]!.on('data', (chunk) => (answer += chunk));
      greedy[0]!.write('GET /q/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      assert.ok(await closedWithin(greedy[0]!, 5_000));
      assert.match(answer, /^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of greedy) socket.destroy();
    }
  });

  it('past the total, every new connection is closed until some close', async () => {
    const held = [
      ...(await Promise.all(Array.from({ length: 3 }, () => openSocket(block.server.url, '127.0.0.3')))),
      ...(await Promise.all(Array.from({ length: 3 }, () => openSocket(block.server.url, '127.0.0.4')))),
    ];
    try {
      assert.deepEqual(await Promise.all(held.map((socket) => closedWithin(socket, 500))), Array(6).fill(false));
      assert.equal(await getFrom(block.server.url, '/q/health/live', '127.0.0.5'), 0, 'the 7th connection is refused');
    } finally {
      for (const socket of held) socket.destroy();
    }
    await waitFor(
      async () => ((await getFrom(block.server.url, '/q/health/live', '127.0.0.5')) === 200 ? true : undefined),
      'the server to accept connections again',
    );
  });
});
