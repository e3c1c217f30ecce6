import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServiceProcess, waitFor } from './support/process.ts';

describe('the service process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-process-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start on a malformed setting and names it', async () => {
    const { stop, output } = startServiceProcess({
      SVC_HTTP_PORT: 'abc',
      SVC_DATASTORE_SQLITE_PATH: join(dir, 'a.db'),
    });
    assert.equal(await stop('SIGCONT'), 1);
    assert.match(output(), /svc\.http\.port/);
    assert.match(output(), /"abc"/);
  });

  it('finishes an in-flight request on SIGTERM, then exits cleanly', async () => {
    // At trace level the service logs each request as it arrives, which tells the test it is in flight.
    const service = startServiceProcess({
      SVC_HTTP_PORT: '0',
      SVC_DATASTORE_SQLITE_PATH: join(dir, 'b.db'),
      SVC_SOME_UNKNOWN_VARIABLE: 'ignored',
      SVC_LOG_LEVEL: 'trace',
    });
    const { output } = service;
    const port = new URL(await service.listening()).port;

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ words: [{ word: 'hello', expressions: 'greeting(hello)' }] });
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    let response = '';
    socket.on('data', (chunk) => (response += chunk));
    socket.write(
      `POST /regulardictionarystore/regulardictionaries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await waitFor(
      () => (output().includes('"incoming request"') ? true : undefined),
      'the request to reach the service',
    );
    const exited = service.stop('SIGTERM');
    await waitFor(() => (output().includes('SIGTERM received') ? true : undefined), 'the shutdown log line');
    socket.write(body.slice(10));
    await once(socket, 'end');
    assert.match(response, /^HTTP\/1\.1 201/);
    assert.match(response, /location: svc:\/\/ai\.svc\.regulardictionary\//i);

    assert.equal(await exited, 0);
  });
});
