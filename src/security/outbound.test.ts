import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createOutbound } from './outbound.ts';
import { createUrlGuard, isRefusedByUrlGuard } from './url-guard.ts';

/** The guard holds where the connection is made, whatever the caller checked before (or did not). */
describe('the guarded outbound dispatcher', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  before(async () => {
    server = createServer((request, response) => {
      if (request.url === '/moved') response.writeHead(302, { location: `http://127.0.0.1:${port}/page` }).end();
      else response.end('reached');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('with the guard on, connects neither to a loopback literal nor to a name that resolves to one', async () => {
    const outbound = createOutbound(createUrlGuard({ enabled: true }), { connectTimeoutMillis: 1000 });
    try {
      const before = connections;
      for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
        await assert.rejects(outbound.fetch(`http://${host}:${port}/page`), (error: unknown) => {
          assert.ok(isRefusedByUrlGuard(error), `${host}: ${String(error)}`);
          return true;
        });
        await assert.rejects(
          outbound.dispatcher.request({ origin: `http://${host}:${port}`, path: '/page', method: 'GET' }),
          (error: unknown) => {
            assert.ok(isRefusedByUrlGuard(error), `${host}: ${String(error)}`);
            return true;
          },
        );
      }
      assert.equal(connections, before, 'no connection was made');
    } finally {
      await outbound.close();
    }
  });

  it('with the guard off, connects and follows redirects', async () => {
    const outbound = createOutbound(createUrlGuard({ enabled: false }), { connectTimeoutMillis: 1000 });
    try {
      const response = await outbound.fetch(`http://127.0.0.1:${port}/moved`);
      assert.equal(await response.text(), 'reached');
    } finally {
      await outbound.close();
    }
  });
});
