import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { AuthenticationError, type Authenticator } from '../security/auth.ts';
import { loadSettings } from '../settings.ts';
import { authPlugin, registerWithAccess } from './auth.ts';
import { registerProblemHandling } from './problems.ts';

/** Tokens are role lists here: `Bearer svc-viewer.svc-editor`; `Bearer bad` is refused. */
const authenticator: Authenticator = {
  async authenticate(token) {
    if (token === 'bad') throw new AuthenticationError('signature');
    return { name: 'tester', roles: new Set(token.split('.')), groups: [], token };
  },
};

async function appWith(
  register: (app: FastifyInstance) => Promise<void> | void,
  authentication = false,
): Promise<FastifyInstance> {
  const app = Fastify();
  registerProblemHandling(app);
  const settings = loadSettings({}, { 'svc.oidc.tenant-enabled': authentication });
  await app.register(authPlugin, { settings, authenticator });
  await register(app);
  await app.ready();
  return app;
}

const ok = async () => ({ ok: true });

describe('route access declarations', () => {
  it('a route without an access declaration stops start-up, naming its method and URL', async () => {
    await assert.rejects(
      appWith(
        (app) =>
          void app.register(async (child) => {
            child.get('/declared', { config: { access: { roles: 'read' } } }, ok);
            child.post('/undeclared', ok);
          }),
      ),
      /POST \/undeclared declares no access/,
    );
  });

  it('also while authentication is off, and for routes added with app.route', async () => {
    await assert.rejects(
      appWith((app) => void app.route({ method: ['GET', 'PUT'], url: '/both', handler: ok })),
      /GET, PUT \/both declares no access/,
    );
  });

  it('declared routes carry their access into the OpenAPI operation and the list of declared routes', async () => {
    const app = await appWith(async (app) => {
      await app.register(swagger, {
        openapi: {
          info: { title: 't', version: '1' },
          components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
        },
      });
      app.get(
        '/things/:id',
        {
          config: { access: { roles: 'write', level: 'EDIT', rule: 'a rule' } },
          schema: { params: { type: 'object', properties: { id: { type: 'string' } } } },
        },
        ok,
      );
      app.get('/open', { config: { access: { roles: 'public' } } }, ok);
    });
    const { paths } = app.swagger() as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const operation = paths['/things/{id}']!.get!;
    assert.deepEqual(operation['x-roles'], ['svc-admin', 'svc-editor']);
    assert.equal(operation['x-access'], 'write');
    assert.equal(operation['x-access-level'], 'EDIT');
    assert.deepEqual(operation.security, [{ bearer: [] }]);
    assert.deepEqual(paths['/open']!.get!.security, []);
    // HEAD twins of GET routes are left out of the list.
    assert.deepEqual(
      app.declaredAccess.map(({ method, url }) => `${method} ${url}`),
      ['GET /things/:id', 'GET /open'],
    );
    assert.equal(app.declaredAccess[0]!.access.rule, 'a rule');
  });

  it("a third-party plugin's routes get the access declared where it is registered", async () => {
    const app = await appWith(async (app) => {
      await app.register(swagger, { openapi: { info: { title: 't', version: '1' } } });
      await registerWithAccess(app, { roles: 'authenticated' }, (docs) =>
        docs.register(swaggerUi, { routePrefix: '/docs' }),
      );
    }, true);
    const docsRoutes = app.declaredAccess.filter(({ url }) => url.startsWith('/docs'));
    assert.ok(docsRoutes.length >= 5, JSON.stringify(docsRoutes));
    assert.ok(docsRoutes.every(({ access }) => access.roles === 'authenticated'));
    assert.equal((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode, 401);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/docs/json', headers: { authorization: 'Bearer no-role' } })).statusCode,
      200,
    );
  });
});

describe('authentication and role checks', () => {
  const app = appWith((app) => {
    app.get('/open', { config: { access: { roles: 'public' } } }, ok);
    app.get('/signed-in', { config: { access: { roles: 'authenticated' } } }, async (request) => ({
      name: request.caller?.principal.name,
    }));
    app.post('/admin', { config: { access: { roles: 'admin' } } }, ok);
  }, true);
  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string) =>
    (await app).inject({ method, url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

  it('public routes need no token; every other route, and an unknown path, needs a valid one', async () => {
    assert.equal((await call('GET', '/open')).statusCode, 200);
    for (const [method, url] of [
      ['GET', '/signed-in'],
      ['POST', '/admin'],
      ['DELETE', '/nothing/here'],
    ] as const) {
      const refused = await call(method, url);
      assert.equal(refused.statusCode, 401, `${method} ${url}`);
      assert.equal(refused.headers['www-authenticate'], 'Bearer');
      assert.equal((await call(method, url, 'bad')).statusCode, 401);
    }
    assert.equal((await call('DELETE', '/nothing/here', 'svc-viewer')).statusCode, 404);
  });

  it('a caller needs one of the roles of the class; the 403 names them', async () => {
    const signedIn = await call('GET', '/signed-in', 'no-role');
    assert.equal(signedIn.statusCode, 200);
    assert.deepEqual(signedIn.json(), { name: 'tester' });
    const refused = await call('POST', '/admin', 'svc-editor.svc-viewer');
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(refused.json().neededRoles, ['svc-admin']);
    assert.match(refused.json().detail, /svc-admin; tester has svc-editor, svc-viewer/);
    assert.equal((await call('POST', '/admin', 'svc-admin')).statusCode, 200);
  });
});
