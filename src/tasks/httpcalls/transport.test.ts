import assert from 'node:assert/strict';
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createOutbound } from '../../security/outbound.ts';
import { createUrlGuard } from '../../security/url-guard.ts';
import { HttpTransport, type SendLimits, type TransportError } from './transport.ts';

/** A loopback target answering with `listener`, and a transport to it; `get` sends a GET to a path of it. */
function targetOf(listener: RequestListener) {
  const server = createServer(listener);
  const outbound = createOutbound(createUrlGuard({ enabled: false }), { connectTimeoutMillis: 1000 });
  const transport = new HttpTransport({ outbound, maxRedirects: 5 });
  let base = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await outbound.close();
    server.closeAllConnections();
    server.close();
  });
  return (path: string, limits: SendLimits) =>
    transport.send(
      { url: new URL(`${base}${path}`), method: 'GET', headers: {}, body: undefined, sensitiveHeaders: new Set() },
      limits,
    );
}

/** The call's own timeout and the turn's signal, each ending a call that gets no answer, told apart. */
describe('HTTP call transport: timeout and interruption', () => {
  // `/slow` never answers; everything else answers at once.
  const send = targetOf((request, response) => {
    if (request.url !== '/slow') response.end('{"ok":true}');
  });
  const get = (path: string, limits: { timeoutMillis: number; signal?: AbortSignal }) =>
    send(path, { maxResponseBytes: 1000, ...limits });
  const code = (expected: string) => (error: unknown) => (error as TransportError).code === expected;

  it('answers within the timeout', async () => {
    const turn = new AbortController();
    const response = await get('/fast', { timeoutMillis: 5000, signal: turn.signal });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), '{"ok":true}');
  });

  it('gives up after the timeout (ETIMEOUT), with or without a turn signal', async () => {
    await assert.rejects(get('/slow', { timeoutMillis: 100 }), code('ETIMEOUT'));
    await assert.rejects(get('/slow', { timeoutMillis: 100, signal: new AbortController().signal }), code('ETIMEOUT'));
  });

  it('stops when the turn is interrupted (EABORTED), long before its timeout', async () => {
    const turn = new AbortController();
    const call = get('/slow', { timeoutMillis: 60_000, signal: turn.signal });
    setTimeout(() => turn.abort(new Error('turn timeout')), 50);
    await assert.rejects(call, code('EABORTED'));
  });

  it('does not start when the turn was interrupted already (EABORTED)', async () => {
    const turn = new AbortController();
    turn.abort(new Error('turn timeout'));
    await assert.rejects(get('/fast', { timeoutMillis: 60_000, signal: turn.signal }), code('EABORTED'));
  });
});

/** How the body of an answer is read: whole with or without a length, cut at the limit with its connection dropped. */
describe('HTTP call transport: reading the answer', () => {
  /** Responses whose connection is still open. */
  const open = new Set<ServerResponse>();
  const send = targetOf((request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    const [, route, size] = /^\/(\w+)\/(\d+)$/.exec(request.url ?? '') ?? [];
    const body = 'x'.repeat(Number(size));
    if (route === 'sized') response.writeHead(200, { 'content-length': body.length }).end(body);
    else if (route === 'chunked') {
      // No content-length: chunked transfer coding, in three writes.
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write(body.slice(0, 10));
      setImmediate(() => {
        response.write(body.slice(10, 20));
        setImmediate(() => response.end(body.slice(20)));
      });
    } else if (route === 'hinted') {
      response.writeEarlyHints({ link: '</style.css>; rel=preload' });
      response.writeHead(201, { 'x-answer': 'final' }).end(body);
    } else if (route === 'endless') {
      response.writeHead(200);
      const pump = () => {
        while (!response.destroyed && response.write('y'.repeat(4096)));
      };
      response.on('drain', pump);
      pump();
    } else response.writeHead(404).end();
  });
  const get = (path: string, maxResponseBytes = 1000) => send(path, { timeoutMillis: 5000, maxResponseBytes });
  const closed = async () => {
    for (let waited = 0; open.size > 0 && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    return open.size === 0;
  };

  it('reads a body with a content-length whole', async () => {
    const response = await get('/sized/300');
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), 'x'.repeat(300));
    assert.equal(response.truncated, false);
    assert.equal(response.headers['content-length'], '300');
  });

  it('reads a body without a content-length (several chunks) whole', async () => {
    const response = await get('/chunked/50');
    assert.equal(response.body.toString(), 'x'.repeat(50));
    assert.equal(response.truncated, false);
    assert.equal(response.headers['transfer-encoding'], 'chunked');
  });

  it('reads an empty body', async () => {
    const response = await get('/sized/0');
    assert.equal(response.body.length, 0);
    assert.equal(response.truncated, false);
  });

  it('keeps a body exactly at the limit whole', async () => {
    const response = await get('/chunked/100', 100);
    assert.equal(response.body.toString(), 'x'.repeat(100));
    assert.equal(response.truncated, false);
  });

  it('cuts a longer body at the limit, with or without a content-length, and drops its connection', async () => {
    for (const path of ['/sized/5000', '/chunked/5000', '/endless/0']) {
      const response = await get(path, 1000);
      assert.equal(response.status, 200, path);
      assert.equal(response.body.length, 1000, path);
      assert.equal(response.truncated, true, path);
      assert.ok(await closed(), `${path}: the connection was dropped`);
    }
  });

  it('answers with the final response after an informational one', async () => {
    const response = await get('/hinted/5');
    assert.equal(response.status, 201);
    assert.equal(response.headers['x-answer'], 'final');
    assert.equal(response.body.toString(), 'xxxxx');
  });
});
