import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createOutbound, type Outbound } from '../../security/outbound.ts';
import { createUrlGuard } from '../../security/url-guard.ts';
import { HttpTransport, type TransportError } from './transport.ts';

/** The call's own timeout and the turn's signal, each ending a call that gets no answer, told apart. */
describe('HTTP call transport: timeout and interruption', () => {
  let server: Server;
  let base: string;
  let outbound: Outbound;
  let transport: HttpTransport;
  before(async () => {
    // `/slow` never answers; everything else answers at once.
    server = createServer((request, response) => {
      if (request.url !== '/slow') response.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    outbound = createOutbound(createUrlGuard({ enabled: false }), { connectTimeoutMillis: 1000 });
    transport = new HttpTransport({ outbound, maxRedirects: 5 });
  });
  after(async () => {
    await outbound.close();
    server.closeAllConnections();
    server.close();
  });

  const get = (path: string, limits: { timeoutMillis: number; signal?: AbortSignal }) =>
    transport.send(
      { url: new URL(`${base}${path}`), method: 'GET', headers: {}, body: undefined, sensitiveHeaders: new Set() },
      { maxResponseBytes: 1000, ...limits },
    );
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
