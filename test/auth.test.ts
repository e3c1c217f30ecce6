import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAgent, deploy, idFromLocation, publishAgent, welcomeOutputs } from './support/agents.ts';
import { controlExtension, controlTask } from './support/control-task.ts';
import { call, type Answer } from './support/http.ts';
import {
  SERVICE_AUDIENCE,
  startIdentityProvider,
  TEST_USERS,
  type TestIdentityProvider,
  type TestUserKey,
} from './support/oidc.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * Authentication and roles against a real identity provider (oidc-provider on loopback): 401 without a valid token,
 * 403 above the role, 200 within it; anonymous paths; the start-as-another-user rule; tokens never logged.
 */

describe('authentication and roles', () => {
  let idp: TestIdentityProvider;
  let server: TestServer;
  const tokens = new Map<TestUserKey, string>();

  const as = (
    user: TestUserKey | undefined,
    method: string,
    path: string,
    options: { json?: unknown; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> =>
    call(server.url, method, path, {
      ...options,
      headers: { ...options.headers, ...(user ? { authorization: `Bearer ${tokens.get(user)}` } : {}) },
    });
  const withToken = (token: string, method: string, path: string) =>
    call(server.url, method, path, { headers: { authorization: `Bearer ${token}` } });

  /** An API client for the test helpers, signed in as the admin. */
  const adminApi = {
    get: (path: string) => as('admin', 'GET', path),
    post: (path: string, options?: { json?: unknown }) => as('admin', 'POST', path, options),
    put: (path: string, options?: { json?: unknown }) => as('admin', 'PUT', path, options),
    patch: (path: string, options?: { json?: unknown }) => as('admin', 'PATCH', path, options),
    delete: (path: string) => as('admin', 'DELETE', path),
  };

  let agentId: string;
  let conversationOfChatter: string;

  before(async () => {
    idp = await startIdentityProvider();
    for (const user of Object.keys(TEST_USERS) as TestUserKey[]) tokens.set(user, await idp.token(user));
    server = await startTestServer(
      'sqlite',
      {
        'svc.oidc.tenant-enabled': true,
        'svc.oidc.auth-server-url': idp.issuer,
        'svc.oidc.client-id': SERVICE_AUDIENCE,
        'svc.authorization.enabled': true,
        'svc.vault.master-key': 'a-master-key-for-the-auth-tests',
        'svc.log.level': 'debug',
      },
      [controlTask],
    );
    agentId = await createAgent(adminApi as never, { outputSet: welcomeOutputs });
    await publishAgent(adminApi as never, agentId);
    await deploy(adminApi as never, agentId);
    const started = await as('chatter', 'POST', `/agents/${agentId}/start`);
    assert.equal(started.status, 201, started.text);
    conversationOfChatter = idFromLocation(started.headers.get('location'));
  });
  after(async () => {
    await server?.dispose();
    await idp?.close();
  });

  /** One request of each protected family (path, method). */
  const protectedRequests = (): [string, string][] => [
    ['GET', '/agentstore/agents/descriptors'],
    ['POST', '/agentstore/agents'],
    ['GET', `/agentstore/agents/${agentId}?version=1`],
    ['GET', `/descriptorstore/descriptors/${agentId}`],
    ['GET', '/deploymentstore/deployments'],
    ['POST', `/administration/production/deploy/${agentId}?version=1`],
    ['GET', `/administration/production/deploymentstatus/${agentId}?version=1`],
    ['POST', `/agents/${agentId}/start`],
    ['GET', `/agents/${conversationOfChatter}`],
    ['GET', '/conversationstore/conversations'],
    ['POST', `/bots/production/${agentId}`],
    ['GET', '/bottriggerstore/bottriggers'],
    ['GET', '/managedbots/some-intent/someone'],
    ['GET', '/secretstore/secrets/default'],
    ['POST', '/backup/import'],
    ['GET', '/llm/tools/costs'],
    ['GET', '/administration/logs'],
    ['GET', '/q/metrics'],
    ['GET', '/q/openapi'],
    ['GET', '/q/swagger-ui'],
    ['GET', '/a2a/agents'],
    ['POST', `/a2a/agents/${agentId}`],
    ['POST', '/mcp'],
    ['GET', '/workspaces'],
    ['DELETE', '/nothing/here'],
  ];

  it('every protected family answers a bare 401 problem without a token', async () => {
    for (const [method, path] of protectedRequests()) {
      const answer = await as(undefined, method, path);
      assert.equal(answer.status, 401, `${method} ${path}: ${answer.text}`);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(answer.json.status, 401);
      assert.equal(answer.headers.get('location'), null);
    }
  });

  it('a token signed by another key, an expired one, one for another audience or issuer, and garbage are 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const valid = {
      iss: idp.issuer,
      aud: SERVICE_AUDIENCE,
      sub: 'x',
      preferred_username: 'ada-admin',
      realm_access: { roles: ['svc-admin'] },
    };
    const refused = [
      await idp.signWithForeignKey('admin'),
      await idp.signWithProviderKey({ ...valid, iat: now - 7200, exp: now - 3600 }),
      await idp.signWithProviderKey({ ...valid, aud: 'another-service', iat: now, exp: now + 600 }),
      await idp.signWithProviderKey({ ...valid, iss: 'http://127.0.0.1:1/other', iat: now, exp: now + 600 }),
      await idp.signWithProviderKey({ ...valid, iat: now }),
      'not-a-jwt',
    ];
    for (const token of refused) {
      for (const [method, path] of [
        ['GET', '/agentstore/agents/descriptors'],
        ['GET', '/secretstore/secrets/default'],
        ['POST', `/agents/${agentId}/start`],
      ] as const) {
        const answer = await withToken(token, method, path);
        assert.equal(answer.status, 401, `${method} ${path}: ${answer.text}`);
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
      }
    }
    // `azp` naming the service is accepted in place of `aud`.
    const viaAzp = await idp.signWithProviderKey({
      ...valid,
      aud: 'account',
      azp: SERVICE_AUDIENCE,
      iat: now,
      exp: now + 600,
    });
    assert.equal((await withToken(viaAzp, 'GET', '/agentstore/agents/descriptors')).status, 200);
    // A non-bearer scheme is no token at all.
    const basic = await call(server.url, 'GET', '/agentstore/agents/descriptors', {
      headers: { authorization: 'Basic YTpi' },
    });
    assert.equal(basic.status, 401);
  });

  it('anonymous paths answer without a token', async () => {
    for (const path of [
      '/q/health/live',
      '/q/health/ready',
      `/a2a/agents/${agentId}/agent.json`,
      '/.well-known/agent.json',
      '/.well-known/agent-card.json',
      '/.well-known/capabilities',
      '/.well-known/capabilities/skills',
      '/',
      '/manager/agents',
    ]) {
      const answer = await as(undefined, 'GET', path);
      assert.notEqual(answer.status, 401, `GET ${path}: ${answer.text}`);
      assert.notEqual(answer.status, 403, `GET ${path}: ${answer.text}`);
    }
    assert.equal((await as(undefined, 'GET', '/q/health/live')).status, 200);
    // The capability reads stay 404 while they are not published; agent cards 404 while no agent is exposed.
    assert.equal((await as(undefined, 'GET', '/.well-known/capabilities')).status, 404);
  });

  it('the viewer reads configuration, deployments and docs but may not write, deploy or converse', async () => {
    for (const [method, path] of [
      ['GET', '/agentstore/agents/descriptors'],
      ['GET', `/agentstore/agents/${agentId}?version=1`],
      ['GET', '/deploymentstore/deployments'],
      ['GET', `/administration/production/deploymentstatus/${agentId}?version=1`],
      ['GET', '/q/openapi'],
      ['GET', '/q/metrics'],
      ['GET', '/conversationstore/conversations'],
      ['GET', '/workspaces'],
      ['GET', '/a2a/agents'],
    ] as const) {
      const answer = await as('viewer', method, path);
      assert.equal(answer.status, 200, `${method} ${path}: ${answer.text}`);
    }
    for (const [method, path, role] of [
      ['POST', '/agentstore/agents', 'svc-editor'],
      ['PUT', `/agentstore/agents/${agentId}?version=1`, 'svc-editor'],
      ['DELETE', `/agentstore/agents/${agentId}?version=1`, 'svc-editor'],
      ['POST', `/administration/production/deploy/${agentId}?version=1`, 'svc-editor'],
      ['POST', `/agents/${agentId}/start`, 'svc-user'],
      ['POST', `/agents/${conversationOfChatter}`, 'svc-user'],
      ['POST', '/backup/import', 'svc-editor'],
      ['GET', '/secretstore/secrets/default', 'svc-admin'],
      ['GET', '/administration/logs', 'svc-admin'],
      ['GET', '/llm/tools/costs', 'svc-admin'],
    ] as const) {
      const answer = await as('viewer', method, path, method === 'GET' || method === 'DELETE' ? {} : { json: {} });
      assert.equal(answer.status, 403, `${method} ${path}: ${answer.text}`);
      assert.match(answer.json.detail, new RegExp(role));
      assert.ok(answer.json.neededRoles.includes(role));
    }
  });

  it('the editor writes, deploys, converses and exports, but secrets, logs and tool history are admin only', async () => {
    const created = await as('editor', 'POST', '/outputstore/outputsets', { json: welcomeOutputs });
    assert.equal(created.status, 201, created.text);
    const exported = await as('editor', 'POST', `/backup/export/${agentId}?agentVersion=1`);
    assert.equal(exported.status, 200, exported.text);
    assert.equal((await as('editor', 'POST', `/agents/${agentId}/start`)).status, 201);
    // Deploying needs EDIT on the agent (a public agent gives USE only) until its owner grants it.
    assert.equal(
      (await as('editor', 'POST', `/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`))
        .status,
      403,
    );
    assert.equal(
      (
        await as('admin', 'PUT', `/descriptorstore/descriptors/${agentId}/grants`, {
          json: [{ principal: TEST_USERS.editor.name, level: 'EDIT' }],
        })
      ).status,
      200,
    );
    assert.equal(
      (await as('editor', 'POST', `/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`))
        .status,
      200,
    );
    for (const path of [
      '/secretstore/secrets/default',
      '/administration/logs',
      '/llm/tools/costs',
      `/llm/tools/history/${conversationOfChatter}`,
    ]) {
      assert.equal((await as('editor', 'GET', path)).status, 403, path);
    }
    assert.equal(
      (await as('editor', 'PUT', '/secretstore/secrets/default/api-key', { json: { value: 'v' } })).status,
      403,
    );
  });

  it('the admin reaches everything, including the admin-only families', async () => {
    for (const path of [
      '/secretstore/secrets/default',
      '/administration/logs',
      '/llm/tools/costs',
      '/q/metrics',
      '/agentstore/agents/descriptors',
    ]) {
      assert.equal((await as('admin', 'GET', path)).status, 200, path);
    }
    const put = await as('admin', 'PUT', '/secretstore/secrets/default/api-key', {
      json: { value: 'top-secret-value' },
    });
    assert.equal(put.status, 200, put.text);
  });

  it('a token without any role of the service is signed in but gets 403 everywhere except /workspaces', async () => {
    assert.equal((await as('nobody', 'GET', '/workspaces')).status, 200);
    const answer = await as('nobody', 'GET', '/agentstore/agents/descriptors');
    assert.equal(answer.status, 403);
    assert.match(answer.json.detail, /svc-viewer/);
  });

  it('the svc-user role converses but cannot read configuration', async () => {
    assert.equal(
      (await as('chatter', 'POST', `/agents/${conversationOfChatter}`, { json: { input: 'hello' } })).status,
      200,
    );
    assert.equal((await as('chatter', 'GET', `/agents/${conversationOfChatter}`)).status, 200);
    assert.equal((await as('chatter', 'GET', '/agentstore/agents/descriptors')).status, 403);
  });

  it('roles are read from realm_access, resource_access.<client> and a plain roles claim', async () => {
    // admin: realm_access; editor: resource_access.svc-agents; viewer: roles.
    assert.equal((await as('admin', 'GET', '/secretstore/secrets/default')).status, 200);
    assert.equal((await as('editor', 'POST', '/outputstore/outputsets', { json: welcomeOutputs })).status, 201);
    assert.equal((await as('viewer', 'GET', '/agentstore/agents/descriptors')).status, 200);
  });

  it('a non-admin starts conversations only as themselves; the userId defaults to the principal; admins may start as anyone', async () => {
    const other = await as('chatter', 'POST', `/agents/${agentId}/start?userId=somebody-else`);
    assert.equal(other.status, 403, other.text);
    const viaContext = await as('chatter', 'POST', `/agents/${agentId}/start`, {
      json: { userId: { type: 'string', value: 'somebody-else' } },
    });
    assert.equal(viaContext.status, 403, viaContext.text);
    const viaBots = await as('chatter', 'POST', `/bots/production/${agentId}?userId=somebody-else`);
    assert.equal(viaBots.status, 403, viaBots.text);
    const managed = await as('chatter', 'GET', '/managedbots/some-intent/somebody-else');
    assert.equal(managed.status, 403, managed.text);

    const self = await as('chatter', 'POST', `/agents/${agentId}/start?userId=${TEST_USERS.chatter.name}`);
    assert.equal(self.status, 201, self.text);
    const conversation = await as(
      'admin',
      'GET',
      `/conversationstore/conversations/${idFromLocation(self.headers.get('location'))}`,
    );
    assert.equal(conversation.json.userId, TEST_USERS.chatter.name);
    const defaulted = await as('chatter', 'POST', `/agents/${agentId}/start`);
    const stored = await as(
      'admin',
      'GET',
      `/conversationstore/conversations/${idFromLocation(defaulted.headers.get('location'))}`,
    );
    assert.equal(stored.json.userId, TEST_USERS.chatter.name);

    const byAdmin = await as('admin', 'POST', `/agents/${agentId}/start?userId=somebody-else`);
    assert.equal(byAdmin.status, 201, byAdmin.text);
  });

  it("non-admins read and continue only their own conversations (another's is a 404); listings show only their own", async () => {
    assert.equal((await as('editor', 'GET', `/agents/${conversationOfChatter}`)).status, 404);
    assert.equal(
      (await as('editor', 'POST', `/agents/${conversationOfChatter}`, { json: { input: 'hi' } })).status,
      404,
    );
    assert.equal((await as('viewer', 'GET', `/conversationstore/conversations/${conversationOfChatter}`)).status, 404);
    assert.equal((await as('admin', 'GET', `/agents/${conversationOfChatter}`)).status, 200);
    const listed = await as('chatter', 'GET', '/conversationstore/conversations?limit=100');
    assert.equal(listed.status, 200);
    assert.ok(listed.json.length > 0);
    assert.ok(listed.json.every((row: { userId: string }) => row.userId === TEST_USERS.chatter.name));
    assert.equal((await as('chatter', 'GET', '/conversationstore/conversations?userId=somebody-else')).status, 403);
  });

  it('the OpenAPI document names the roles of each operation and the bearer scheme', async () => {
    const doc = (await as('viewer', 'GET', '/q/openapi')).json;
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer');
    assert.deepEqual(doc.paths['/secretstore/secrets/{tenantId}'].get['x-roles'], ['svc-admin']);
    assert.deepEqual(doc.paths['/agentstore/agents'].post['x-roles'], ['svc-admin', 'svc-editor']);
    assert.deepEqual(doc.paths['/agentstore/agents/{id}'].delete['x-access-level'], 'OWN');
    assert.deepEqual(doc.paths['/agents/{agentId}/start'].post.security, [{ bearer: [] }]);
    assert.deepEqual(doc.paths['/.well-known/agent.json'].get.security, []);
  });

  it('HTTP calls send ${caller:token} and ${caller:userId} of the chatting user to allow-listed targets only, masked in the record', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const target = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    try {
      await server.restart({ 'svc.caller-identity.allowed-origins': targetUrl });
      const httpCalls = (url: string) => ({
        targetServerUrl: url,
        httpCalls: [
          {
            name: 'whoami',
            actions: ['whoami'],
            saveResponse: true,
            responseObjectName: 'who',
            request: {
              path: '/who',
              method: 'get',
              headers: { Authorization: 'Bearer ${caller:token}', 'X-User': '{caller:userId}' },
            },
          },
        ],
      });
      const build = async (url: string) => {
        const set = await adminApi.post('/httpcallsstore/httpcalls', { json: httpCalls(url) });
        assert.equal(set.status, 201, set.text);
        const workflow = await adminApi.post('/packagestore/packages', {
          json: {
            packageExtensions: [
              controlExtension,
              { type: 'svc://ai.svc.httpcalls', config: { uri: set.headers.get('location') } },
            ],
          },
        });
        const agent = await adminApi.post('/agentstore/agents', {
          json: { packages: [workflow.headers.get('location')] },
        });
        const id = idFromLocation(agent.headers.get('location'));
        await adminApi.put(`/descriptorstore/descriptors/${id}/visibility`, { json: { visibility: 'public' } });
        await deploy(adminApi as never, id);
        return id;
      };
      const allowedAgent = await build(targetUrl);
      const started = await as('chatter', 'POST', `/agents/${allowedAgent}/start`);
      const conversationId = idFromLocation(started.headers.get('location'));
      seen.length = 0;
      const said = await as('chatter', 'POST', `/agents/${conversationId}?returnDetailed=true`, {
        json: { input: 'who am i', context: { actions: { type: 'string', value: 'whoami' } } },
      });
      assert.equal(said.status, 200, said.text);
      assert.equal(seen.length, 1, said.text);
      assert.equal(seen[0]!.authorization, `Bearer ${tokens.get('chatter')}`);
      assert.equal(seen[0]!['x-user'], TEST_USERS.chatter.name);
      assert.ok(!said.text.includes(tokens.get('chatter')!), 'the token is not in the answer');
      const stored = await as('admin', 'GET', `/conversationstore/conversations/${conversationId}`);
      assert.ok(!stored.text.includes(tokens.get('chatter')!), 'the token is not in the stored conversation');

      // The same call towards an origin that is not allow-listed (another port) sends empty values.
      const otherOrigin = targetUrl.replace('127.0.0.1', 'localhost');
      const foreignAgent = await build(otherOrigin);
      const foreign = await as('chatter', 'POST', `/agents/${foreignAgent}/start`);
      seen.length = 0;
      await as('chatter', 'POST', `/agents/${idFromLocation(foreign.headers.get('location'))}`, {
        json: { input: 'who am i', context: { actions: { type: 'string', value: 'whoami' } } },
      });
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.authorization, 'Bearer');
      assert.equal(seen[0]!['x-user'] ?? '', '');
    } finally {
      target.close();
    }
  });

  it('no token ever reaches a log line', () => {
    const all = server.logLines.join('\n');
    assert.ok(server.logLines.length > 0);
    for (const token of tokens.values()) {
      assert.ok(!all.includes(token), 'a token was logged');
      assert.ok(!all.includes(token.split('.')[2]!), 'a token signature was logged');
    }
  });
});
