import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAgent, createResource, deploy, idFromLocation, welcomeOutputs } from './support/agents.ts';
import { call, type RequestOptions } from './support/http.ts';
import { SERVICE_AUDIENCE, startIdentityProvider, TEST_USERS, type TestIdentityProvider } from './support/oidc.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * `${caller:token}` / `${caller:userId}` in an HTTP-call header are resolved where the configuration wrote them,
 * never when they arrive through data: a user who puts `${caller:token}` into a context value rendered next to a
 * configured `${caller:userId}` does not make the call send the bearer token (like vault references).
 */

describe('caller placeholders arriving through data stay text', () => {
  let idp: TestIdentityProvider;
  let server: TestServer;
  let target: Server;
  let token: string;
  const seen: IncomingHttpHeaders[] = [];

  const api = {
    get: (path: string, options: RequestOptions = {}) => request('GET', path, options),
    post: (path: string, options: RequestOptions = {}) => request('POST', path, options),
    put: (path: string, options: RequestOptions = {}) => request('PUT', path, options),
    patch: (path: string, options: RequestOptions = {}) => request('PATCH', path, options),
    delete: (path: string, options: RequestOptions = {}) => request('DELETE', path, options),
  };
  function request(method: string, path: string, options: RequestOptions) {
    return call(server.url, method, path, {
      ...options,
      headers: { ...options.headers, authorization: `Bearer ${token}` },
    });
  }

  before(async () => {
    target = createServer((incoming, response) => {
      seen.push(incoming.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    idp = await startIdentityProvider();
    token = await idp.token('admin');
    server = await startTestServer('sqlite', {
      'svc.oidc.tenant-enabled': true,
      'svc.oidc.auth-server-url': idp.issuer,
      'svc.oidc.client-id': SERVICE_AUDIENCE,
      'svc.caller-identity.allowed-origins': `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
    });
  });
  after(async () => {
    await server?.dispose();
    await idp?.close();
    target?.close();
  });

  it('sends the configured ${caller:userId}, not a ${caller:token} from a context value', async () => {
    const httpCalls = await createResource(api, '/httpcallsstore/httpcalls', {
      targetServerUrl: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
      httpCalls: [
        {
          name: 'tagged',
          actions: ['tagged'],
          request: { path: '/tagged', method: 'get', headers: { 'X-Tag': '${caller:userId} {context.tag}' } },
        },
      ],
    });
    const behavior = await createResource(api, '/behaviorstore/behaviorsets', {
      behaviorGroups: [
        {
          name: 'Tag',
          behaviorRules: [
            {
              name: 'Tag',
              actions: ['tagged'],
              conditions: [
                {
                  type: 'negation',
                  conditions: [{ type: 'actionmatcher', configs: { actions: 'CONVERSATION_START' } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const agentId = await createAgent(api, {
      outputSet: welcomeOutputs,
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: behavior } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: httpCalls } },
      ],
    });
    await deploy(api, agentId);
    const started = await api.post(`/agents/${agentId}/start`);
    assert.equal(started.status, 201, started.text);
    const conversationId = idFromLocation(started.headers.get('location'));

    seen.length = 0;
    const said = await api.post(`/agents/${conversationId}`, {
      json: { input: 'tag me', context: { tag: { type: 'string', value: '${caller:token}' } } },
    });
    assert.equal(said.status, 200, said.text);
    assert.equal(seen.length, 1, said.text);
    assert.equal(seen[0]!['x-tag'], `${TEST_USERS.admin.name} \${caller:token}`, 'the data placeholder stays text');
    assert.ok(!JSON.stringify(seen[0]).includes(token), 'the bearer token is not sent');
  });
});
