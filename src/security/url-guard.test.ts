import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { HttpTransport } from '../tasks/httpcalls/transport.ts';
import { createOutbound } from './outbound.ts';
import { alwaysGuard, BlockedUrlError, createUrlGuard, refusalReason } from './url-guard.ts';

describe('refusalReason', () => {
  const refused: ReadonlyArray<readonly [string, RegExp]> = [
    ['127.0.0.1', /loopback/],
    ['127.8.9.10', /loopback/],
    ['::1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['169.254.1.1', /link-local/],
    ['fe80::1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['::', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['ff02::1', /multicast/],
    ['169.254.169.254', /metadata/],
    ['fd00:ec2::254', /metadata/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['::ffff:169.254.169.254', /metadata/],
    ['::ffff:a00:1', /private/],
    ['[::1]', /loopback/],
    ['255.255.255.255', /reserved or broadcast/],
    ['0.1.2.3', /unspecified/],
    ['192.0.2.1', /documentation/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['198.18.0.1', /reserved/],
    ['240.0.0.1', /reserved/],
    ['239.255.255.250', /multicast/],
    ['::127.0.0.1', /loopback/],
    ['::ffff:0:7f00:1', /loopback/],
    ['::ffff:0:10.1.1.1', /private/],
    ['0:0:0:0:0:ffff:7f00:1', /loopback/],
    ['64:ff9b::10.0.0.1', /private/],
    ['64:ff9b::a9fe:a9fe', /metadata/],
    ['64:ff9b:1::1', /reserved/],
    ['2002:7f00:1::', /loopback/],
    ['2002:c0a8:101::1', /private/],
    ['2001:db8::1', /documentation/],
    ['3fff::1', /documentation/],
    ['2001::1', /reserved/],
    ['100::1', /reserved/],
    ['::2', /reserved/],
    ['fec0::1', /private/],
    ['fe80::1%eth0', /link-local/],
  ];
  for (const [address, reason] of refused) {
    it(`refuses ${address}`, () => assert.match(refusalReason(address) ?? 'accepted', reason));
  }

  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.0.3.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2a00:1450:4001::1',
  ]) {
    it(`accepts ${address}`, () => assert.equal(refusalReason(address), undefined));
  }
});

describe('createUrlGuard', () => {
  it('lets everything through when disabled', async () => {
    const guard = createUrlGuard({ enabled: false });
    assert.equal(guard.enabled, false);
    await guard.check(new URL('http://127.0.0.1/x'));
    await guard.check(new URL('http://localhost/x'));
  });

  it('refuses loopback and private literals with the host and the reason', async () => {
    const guard = createUrlGuard({ enabled: true });
    await assert.rejects(guard.check(new URL('http://127.0.0.1:8080/x')), (error: unknown) => {
      assert.ok(error instanceof BlockedUrlError);
      assert.equal(error.host, '127.0.0.1');
      assert.match(error.message, /'127\.0\.0\.1'.*loopback/);
      return true;
    });
    await assert.rejects(guard.check(new URL('http://[::ffff:10.0.0.1]/')), /private/);
    await assert.rejects(guard.check(new URL('http://169.254.169.254/latest/meta-data')), /metadata/);
  });

  it('refuses a host name that resolves to loopback (localhost)', async () => {
    await assert.rejects(alwaysGuard.check(new URL('http://localhost:1/x')), (error: unknown) => {
      assert.ok(error instanceof BlockedUrlError);
      assert.match(error.message, /'localhost'.*resolves to .* loopback/);
      return true;
    });
  });

  it('never names credentials of the URL', async () => {
    await assert.rejects(alwaysGuard.check(new URL('http://user:hunter2@127.0.0.1/')), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.doesNotMatch(error.message, /hunter2|user/);
      return true;
    });
  });

  it('refuses schemes other than http and https', async () => {
    await assert.rejects(alwaysGuard.check(new URL('file:///etc/passwd')), /scheme 'file'/);
  });

  it('gives sockets a lookup that refuses what it resolves (no connection is made)', async () => {
    let connections = 0;
    const server = createServer((_request, response) => response.end('reached'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const failure = await new Promise<unknown>((resolve) => {
        const outgoing = request({ host: 'localhost', port, path: '/', lookup: alwaysGuard.lookup }, () =>
          resolve(undefined),
        );
        outgoing.on('error', resolve);
        outgoing.end();
      });
      assert.ok(failure instanceof BlockedUrlError, String(failure));
      assert.equal(connections, 0);

      const allowed = await new Promise<string>((resolve, reject) => {
        const outgoing = request(
          { host: 'localhost', port, path: '/', family: 4, lookup: createUrlGuard({ enabled: false }).lookup },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve(body));
          },
        );
        outgoing.on('error', reject);
        outgoing.end();
      });
      assert.equal(allowed, 'reached');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('redirects are checked again', () => {
  it('a redirect from an allowed target to a private address is refused before any connection to it', async () => {
    const server = createServer((_request, response) =>
      response.writeHead(302, { location: 'http://10.0.0.7/internal' }).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    // The real guard, except that this test's own loopback target counts as public.
    const real = createUrlGuard({ enabled: true });
    const checked: string[] = [];
    const guard = {
      enabled: true,
      lookup: real.lookup,
      async check(url: URL) {
        checked.push(url.host);
        if (url.host === `127.0.0.1:${port}`) return;
        await real.check(url);
      },
    };
    const outbound = createOutbound(guard, { connectTimeoutMillis: 1000 });
    const transport = new HttpTransport({ outbound, maxRedirects: 5 });
    try {
      await assert.rejects(
        transport.send(
          {
            url: new URL(`http://127.0.0.1:${port}/start`),
            method: 'GET',
            headers: {},
            body: undefined,
            sensitiveHeaders: new Set(),
          },
          { timeoutMillis: 2000, maxResponseBytes: 1000 },
        ),
        /10\.0\.0\.7/,
      );
      // Checked before each request and again when its connection is made (an IP literal is not looked up).
      assert.deepEqual([...new Set(checked)], [`127.0.0.1:${port}`, '10.0.0.7']);
    } finally {
      await outbound.close();
      server.close();
    }
  });
});
