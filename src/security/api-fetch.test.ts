import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Agent, fetch as undiciFetch } from 'undici';
import { apiFetch } from './api-fetch.ts';

/** The lean API fetch answers as undici's fetch does, case by case, against the same loopback server. */
describe('apiFetch', () => {
  let server: Server;
  let base: string;
  const agent = new Agent();
  const lean = apiFetch(agent);
  const full = ((input: string, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;

  before(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        // Asking for an encoding is the one difference on the wire (api-fetch.ts).
        const { 'accept-encoding': _encoding, ...headers } = request.headers;
        switch (request.url) {
          case '/gzip':
            response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
            response.end(gzipSync('{"packed":true}'));
            return;
          case '/moved':
            response.writeHead(307, { location: '/echo' }).end();
            return;
          case '/loop':
            response.writeHead(302, { location: '/loop' }).end();
            return;
          case '/broken':
            response.writeHead(200, { 'content-length': '100' });
            response.write('partial');
            setTimeout(() => response.destroy(), 20);
            return;
          case '/slow':
            setTimeout(() => response.end('late'), 1_000);
            return;
          case '/empty':
            response.writeHead(204).end();
            return;
          case '/failure':
            response.writeHead(500, 'Internal Server Error', { 'set-cookie': ['a=1', 'b=2'] });
            response.end('{"error":"boom"}');
            return;
          default:
            response.writeHead(200, { 'content-type': 'application/json' });
            response.end(
              JSON.stringify({
                method: request.method,
                url: request.url,
                headers: Object.entries(headers).sort(),
                body,
              }),
            );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await agent.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Status, status text, headers and body text, or what was thrown (class, message, the cause's code). */
  async function outcome(fetchFunction: typeof fetch, path: string, init?: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await fetchFunction(`${base}${path}`, init);
    } catch (error) {
      return { thrown: describeError(error) };
    }
    const body = await response.text().catch((error: unknown) => ({ bodyFailed: describeError(error) }));
    return {
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get('content-type'),
      setCookie: response.headers.getSetCookie(),
      body,
    };
  }

  function describeError(error: unknown) {
    const cause = (error as { cause?: { code?: unknown } }).cause;
    return {
      type: (error as Error).constructor.name,
      name: (error as Error).name,
      message: (error as Error).message,
      causeCode: cause?.code,
    };
  }

  const cases: Array<[string, string, RequestInit | undefined]> = [
    [
      'a JSON POST',
      '/echo',
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: '{}' },
    ],
    ['a text body (fetch labels it text/plain)', '/echo', { method: 'post', body: 'plain' }],
    [
      'a byte body and a Headers object',
      '/echo',
      { method: 'PUT', headers: new Headers({ 'X-A': '1' }), body: new Uint8Array([104, 105]) },
    ],
    ['a GET without options', '/echo?q=1', undefined],
    ['an encoded answer', '/gzip', undefined],
    ['a redirect', '/moved', { method: 'POST', body: 'again' }],
    ['an answer without body', '/empty', undefined],
    ['a failure status', '/failure', { method: 'POST', body: '{}' }],
    ['a body cut off midway', '/broken', undefined],
    ['an aborted request', '/slow', { signal: AbortSignal.timeout(50) }],
  ];
  for (const [what, path, init] of cases) {
    it(`answers ${what} as fetch does`, async () => {
      assert.deepEqual(await outcome(lean, path, init), await outcome(full, path, init));
    });
  }

  it('rejects an endless redirect and a refused connection as fetch does: TypeError "fetch failed"', async () => {
    for (const url of [`${base}/loop`, 'http://127.0.0.1:1/refused']) {
      const error = await lean(url).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, 'fetch failed');
      assert.ok(error.cause instanceof Error);
    }
  });
});
