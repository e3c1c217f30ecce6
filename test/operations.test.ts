import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dictionaryExample } from './fixtures/resources.ts';
import { serverOfBlock } from './support/server.ts';

/** Every route the server answers, as `METHOD /path` with OpenAPI-style `{param}`s, read from Fastify's route tree. */
function registeredRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([^)]*)\)/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of match[3]!.split(', ')) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('operations on a running server', () => {
  const block = serverOfBlock('sqlite');
  const { api } = block;

  it('the OpenAPI document lists every route the server answers', async () => {
    const document = await api.get('/q/openapi');
    assert.equal(document.status, 200);
    assert.match(document.json.openapi, /^3\./);
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(document.json.paths as Record<string, object>)) {
      for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const routes = registeredRoutes(block.server.server.app.printRoutes({ commonPrefix: false }))
      // Swagger UI, the document itself and the web manager's catch-all are not API operations.
      .filter((route) => !route.includes('/q/swagger-ui') && !['GET /q/openapi', 'GET /', 'GET /*'].includes(route));
    assert.ok(routes.length > 60, `found ${routes.length} routes`);
    // Routes sharing a parameter position print as `{a}|{b}`; each such route must be documented with one of the names.
    const variants = (route: string) => {
      const match = /\{(\w+)\}\|\{(\w+)\}/.exec(route);
      return match ? [route.replace(match[0], `{${match[1]}}`), route.replace(match[0], `{${match[2]}}`)] : [route];
    };
    const missing = routes.filter((route) => !variants(route).some((variant) => documented.has(variant)));
    assert.deepEqual(missing, []);
    assert.ok(documented.has('POST /behaviorstore/behaviorsets'));
    const create = document.json.paths['/behaviorstore/behaviorsets'].post;
    assert.ok(create.requestBody, 'the body schema is documented');
  });

  it('serves Swagger UI', async () => {
    const page = await fetch(`${block.server.url}/q/swagger-ui`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /swagger-ui/i);
    const initializer = await fetch(`${block.server.url}/q/swagger-ui/static/swagger-initializer.js`);
    assert.equal(initializer.status, 200);
  });

  it('health: live and ready (the store answers)', async () => {
    const live = await api.get('/q/health/live');
    assert.equal(live.status, 200);
    assert.equal(live.json.status, 'UP');
    const ready = await api.get('/q/health/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json.checks, [{ name: 'store', status: 'UP' }]);
  });

  it('metrics: request durations by route and status, store operations, process metrics', async () => {
    await api.post('/regulardictionarystore/regulardictionaries', { json: dictionaryExample });
    await api.get('/regulardictionarystore/regulardictionaries/000000000000000000000000?version=1');
    const metrics = await api.get('/q/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(
      metrics.text,
      /svc_http_server_requests_seconds_count\{[^}]*route="\/regulardictionarystore\/regulardictionaries"[^}]*status="201"[^}]*\} 1/,
    );
    assert.match(
      metrics.text,
      /svc_http_server_requests_seconds_count\{[^}]*route="\/regulardictionarystore\/regulardictionaries\/:id"[^}]*status="404"/,
    );
    assert.match(metrics.text, /svc_store_operations_total\{kind="dictionary",operation="create",outcome="ok"\} 1/);
    assert.match(metrics.text, /svc_process_cpu_seconds_total/);
    for (const line of metrics.text.split('\n')) {
      const counter = /^# TYPE (\S+) counter$/.exec(line);
      if (counter) assert.match(counter[1]!, /_total$/, `counter ${counter[1]} ends in _total`);
    }
  });

  it('logs: recent entries with level filter and search; bad level is a 400', async () => {
    await api.post('/behaviorstore/behaviorsets', { json: { behaviorGroups: [] } });
    const recent = await api.get('/administration/logs?search=created%20behavior');
    assert.equal(recent.status, 200);
    assert.ok(recent.json.length >= 1);
    assert.equal(recent.json.at(-1).level, 'INFO');
    assert.match(recent.json.at(-1).message, /created behavior set/);
    const warnings = await api.get('/administration/logs?level=WARN&search=created');
    assert.deepEqual(warnings.json, []);
    const bad = await api.get('/administration/logs?level=LOUD');
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);
  });

  it('logs: the SSE stream sends matching live entries', async () => {
    const controller = new AbortController();
    const response = await fetch(`${block.server.url}/administration/logs/stream?search=created%20output`, {
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = response.body!.getReader();
    await api.post('/outputstore/outputsets', { json: { outputSet: [] } });
    let received = '';
    while (!received.includes('created output set')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    const event = received.split('\n').find((line) => line.startsWith('data: ') && line.includes('created output set'));
    assert.ok(event, received);
    assert.equal(JSON.parse(event.slice(6)).level, 'INFO');
  });
});
