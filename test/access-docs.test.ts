import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { accessTableMarkdown, withAccessTable } from '../src/http/access-docs.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('the access table of the README', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server?.dispose());

  it('is the one generated from the routes (run npm run docs:access after changing a route)', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const table = accessTableMarkdown(server.server.app.declaredAccess);
    assert.equal(withAccessTable(readme, table), readme, 'the README access table is stale: run npm run docs:access');
  });

  it('names every route of the application, third-party ones included', () => {
    const urls = new Set(server.server.app.declaredAccess.map((route) => route.url));
    for (const url of [
      '/agents/:agentId/start',
      '/q/openapi',
      '/q/swagger-ui/json',
      '/',
      '/*',
      '/secretstore/secrets/:tenantId',
    ]) {
      assert.ok(urls.has(url), url);
    }
  });
});
