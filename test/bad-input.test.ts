import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call } from './support/http.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * Bad input never gives 500 (issue 14, item 8), on every route the OpenAPI document lists: a version (or any other
 * number in a query string) that is not a finite positive integer answers 400, and so does a JSON body nesting
 * 10,000 levels deep. Walking the document keeps new routes covered without listing them here.
 */

const someId = '0123456789abcdef01234567';
const badNumbers = ['Infinity', '-Infinity', '1e400', '-1', '1.5', 'NaN', 'abc'];
const deepBody = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
/** Route families with JSON bodies (the list; deployments and backup are added by hand below). */
const bodyFamilies = [
  '/agentstore/',
  '/descriptorstore/',
  '/agents/',
  '/bottriggerstore/',
  '/secretstore/',
  '/llm/tools/',
];

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly numberQueries: string[];
  /** Required number parameters: given a valid value while another one is tested. */
  readonly requiredNumbers: string[];
  readonly jsonBody: boolean;
}

/** A body the route accepts, so that the 400 is about the query string (Fastify checks the body first). */
const validBody = ({ method, path, jsonBody }: Operation): unknown => {
  if (!jsonBody) return undefined;
  if (method === 'PATCH')
    return path.startsWith('/descriptorstore/')
      ? { operation: 'SET', document: { name: 'x' } }
      : [{ operation: 'DELETE', document: {} }];
  if (path.endsWith('/runs')) return { agentId: someId, agentVersion: 1 };
  if (path.endsWith('/search')) return { query: 'x' };
  return {};
};

const concretePath = (template: string) =>
  template.replace(/\{environment\}/g, 'production').replace(/\{[^}]+\}/g, someId);

for (const store of storeTypes) {
  describe(`bad input on every route (${store})`, () => {
    let server: TestServer;
    let operations: Operation[];
    before(async () => {
      // With the vault on, so that the secret routes get as far as reading their body.
      server = await startTestServer(store, { 'svc.vault.master-key': 'bad-input-test-master-key-0123456789' });
      const doc = (await call(server.url, 'GET', '/q/openapi')).json;
      operations = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, methods]) =>
        Object.entries<any>(methods).map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          numberQueries: (operation.parameters ?? [])
            .filter((p: any) => p.in === 'query' && ['integer', 'number'].includes(p.schema?.type))
            .map((p: any) => p.name as string),
          requiredNumbers: (operation.parameters ?? [])
            .filter((p: any) => p.in === 'query' && p.required && ['integer', 'number'].includes(p.schema?.type))
            .map((p: any) => p.name as string),
          jsonBody: 'application/json' in (operation.requestBody?.content ?? {}),
        })),
      );
    });
    after(() => server.dispose());

    it('answers 400 to a version (or other number) that is not a finite positive integer', async () => {
      const withNumbers = operations.filter((o) => o.numberQueries.length > 0);
      for (const family of ['/agentstore/', '/descriptorstore/', '/administration/', '/conversationstore/', '/backup/'])
        assert.ok(
          withNumbers.some((o) => o.path.startsWith(family)),
          `${family}: a route with a number in its query`,
        );
      for (const operation of withNumbers) {
        const { method, path, numberQueries, requiredNumbers } = operation;
        for (const name of numberQueries) {
          const others = requiredNumbers.filter((other) => other !== name).map((other) => `&${other}=1`);
          for (const value of badNumbers) {
            const url = `${concretePath(path)}?${name}=${encodeURIComponent(value)}${others.join('')}`;
            const answer = await call(server.url, method, url, { json: validBody(operation) });
            // -1 is a valid index for no route, but some routes read a negative limit as "all": only versions must refuse it.
            if (value === '-1' && !/version/i.test(name)) {
              assert.ok(answer.status < 500, `${method} ${url}: ${answer.status} ${answer.text}`);
              continue;
            }
            assert.equal(answer.status, 400, `${method} ${url}: ${answer.text}`);
            assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/, `${method} ${url}`);
            assert.match(answer.json.detail, new RegExp(`\\$\\.${name}`), `${method} ${url}: ${answer.json.detail}`);
          }
        }
      }
    });

    it('the deployment status of version=Infinity answers 400, not 500', async () => {
      for (const format of ['json', 'text']) {
        const answer = await call(
          server.url,
          'GET',
          `/administration/production/deploymentstatus/${someId}?version=Infinity&format=${format}`,
        );
        assert.equal(answer.status, 400, answer.text);
        assert.match(answer.json.detail, /\$\.version .*finite/);
      }
    });

    it('answers 400 to a JSON body nesting 10,000 levels deep', async () => {
      const withBodies = operations.filter((o) => o.jsonBody);
      for (const family of bodyFamilies)
        assert.ok(
          withBodies.some((o) => o.path.startsWith(family)),
          `${family}: a route with a JSON body`,
        );
      const targets = [
        ...withBodies.map(({ method, path }) => ({ method, path: concretePath(path) })),
        // The import routes read a ZIP, but a JSON body sent to them must not get further than a deep one elsewhere.
        { method: 'POST', path: '/backup/import' },
        { method: 'POST', path: '/backup/import/preview' },
        { method: 'POST', path: `/backup/export/${someId}` },
        { method: 'POST', path: `/administration/production/deploy/${someId}` },
      ];
      for (const { method, path } of targets) {
        const answer = await call(server.url, method, path, {
          body: deepBody,
          headers: { 'content-type': 'application/json' },
        });
        if (path.startsWith('/backup/')) {
          // The backup routes read ZIP files or nothing: refused for the content type before the depth matters.
          assert.equal(answer.status, 415, `${method} ${path}: ${answer.text}`);
          continue;
        }
        assert.equal(answer.status, 400, `${method} ${path}: ${answer.text}`);
        // The OpenAI-compatible paths answer in OpenAI's error shape.
        const detail = path.startsWith('/v1/') ? answer.json.error.message : answer.json.detail;
        assert.match(detail, /svc\.http\.max-json-depth/, `${method} ${path}`);
      }
    });
  });
}
