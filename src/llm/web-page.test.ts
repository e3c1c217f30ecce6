import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { allowHttpUrls, fetchPageText, htmlToText, MAX_PAGE_TEXT, unguardedWebAccess } from './web-page.ts';

describe('web page tool fetch', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((request, response) => {
      if (request.url === '/moved') return response.writeHead(302, { location: '/page' }).end();
      if (request.url === '/long')
        return response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(20_000));
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<html><head><title>t</title><script>evil()</script></head><body><h1>Hi &amp; welcome</h1><p>Text</p></body></html>',
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('checks the URL before the request and before every redirect, and returns readable text', async () => {
    const checked: string[] = [];
    const text = await fetchPageText(`${base}/moved`, {
      web: { checkUrl: async (url) => void checked.push(url), fetch },
      signal: new AbortController().signal,
    });
    assert.deepEqual(checked, [`${base}/moved`, `${base}/page`]);
    assert.equal(text, 'Hi & welcome\nText');
  });

  it('stops when the check refuses a redirect target', async () => {
    const refuseSecond = async (url: string) => {
      if (url.endsWith('/page')) throw new Error('refused target');
    };
    await assert.rejects(
      fetchPageText(`${base}/moved`, { web: { checkUrl: refuseSecond, fetch }, signal: new AbortController().signal }),
      /refused target/,
    );
  });

  it('returns at most 5000 characters, and by default allows only http(s)', async () => {
    assert.equal(
      (await fetchPageText(`${base}/long`, { web: unguardedWebAccess, signal: new AbortController().signal })).length,
      MAX_PAGE_TEXT,
    );
    await assert.rejects(allowHttpUrls('file:///etc/passwd'), /Only http and https/);
    await assert.rejects(allowHttpUrls('not a url'), /not a valid URL/);
    assert.equal(htmlToText('<style>a{}</style>a&#65;&#x42;'), 'aAB');
  });
});
