import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deploy, idFromLocation, welcomeOutputs } from './support/agents.ts';
import { call, type Answer } from './support/http.ts';
import {
  SERVICE_AUDIENCE,
  startIdentityProvider,
  TEST_USERS,
  type TestIdentityProvider,
  type TestUserKey,
} from './support/oidc.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * Access levels and workspaces (DESIGN §4.12): owners, grants, visibility, callerLevel, GET /workspaces, and
 * what changes when enforcement is off. Users A (alice) and B (bob) are editors; C (carol) shares A's group.
 */

const A = TEST_USERS.userA.name;
const B = TEST_USERS.userB.name;

for (const storeType of storeTypes) {
  describe(`access levels and workspaces on ${storeType}`, () => {
    let idp: TestIdentityProvider;
    let server: TestServer;
    const tokens = new Map<TestUserKey, string>();
    const as = (user: TestUserKey, method: string, path: string, json?: unknown): Promise<Answer> =>
      call(server.url, method, path, {
        ...(json === undefined ? {} : { json }),
        headers: { authorization: `Bearer ${tokens.get(user)}` },
      });
    const apiOf = (user: TestUserKey) => ({
      get: (path: string) => as(user, 'GET', path),
      post: (path: string, options?: { json?: unknown }) => as(user, 'POST', path, options?.json),
    });

    /** The ids of the workflow and the output set each agent of `agentOf` references. */
    const referencedBy = new Map<string, string[]>();
    /** A deployable agent of `user` (its workflow and output set are the user's too). */
    const agentOf = async (user: TestUserKey): Promise<string> => {
      const outputs = await as(user, 'POST', '/outputstore/outputsets', welcomeOutputs);
      assert.equal(outputs.status, 201, outputs.text);
      const workflow = await as(user, 'POST', '/packagestore/packages', {
        packageExtensions: [{ type: 'svc://ai.svc.output', config: { uri: outputs.headers.get('location') } }],
      });
      const agent = await as(user, 'POST', '/agentstore/agents', { packages: [workflow.headers.get('location')] });
      assert.equal(agent.status, 201, agent.text);
      const agentId = idFromLocation(agent.headers.get('location'));
      referencedBy.set(
        agentId,
        [workflow, outputs].map((answer) => idFromLocation(answer.headers.get('location'))),
      );
      return agentId;
    };
    const agentIdsListedFor = async (user: TestUserKey): Promise<string[]> => {
      const answer = await as(user, 'GET', '/agentstore/agents/descriptors?limit=0');
      assert.equal(answer.status, 200, answer.text);
      return answer.json.map((descriptor: { resource: string }) =>
        idFromLocation(descriptor.resource.replace(/\?version=\d+$/, '')),
      );
    };

    let agentOfA: string;

    before(async () => {
      idp = await startIdentityProvider();
      for (const user of Object.keys(TEST_USERS) as TestUserKey[]) tokens.set(user, await idp.token(user));
      server = await startTestServer(storeType, {
        'svc.oidc.tenant-enabled': true,
        'svc.oidc.auth-server-url': idp.issuer,
        'svc.oidc.client-id': SERVICE_AUDIENCE,
        'svc.authorization.enabled': true,
        'svc.workspaces.enabled': true,
      });
      agentOfA = await agentOf('userA');
      await deploy(apiOf('userA') as never, agentOfA);
    });
    after(async () => {
      await server?.dispose();
      await idp?.close();
    });

    it("A's private agent is invisible to B: left out of B's listing, reads 404, writes 404", async () => {
      assert.ok((await agentIdsListedFor('userA')).includes(agentOfA));
      assert.ok(!(await agentIdsListedFor('userB')).includes(agentOfA));
      assert.equal((await as('userB', 'GET', `/agentstore/agents/${agentOfA}?version=1`)).status, 404);
      assert.equal((await as('userB', 'GET', `/descriptorstore/descriptors/${agentOfA}`)).status, 404);
      assert.equal((await as('userB', 'POST', `/agents/${agentOfA}/start`)).status, 404);
      assert.equal((await as('userB', 'DELETE', `/agentstore/agents/${agentOfA}?version=1`)).status, 404);
      assert.equal((await as('userB', 'GET', `/descriptorstore/descriptors/${agentOfA}/grants`)).status, 404);
    });

    it('descriptors carry the owner, the space, the visibility and the per-caller level; grants only at the owner level', async () => {
      const own = await as('userA', 'GET', `/descriptorstore/descriptors/${agentOfA}`);
      assert.equal(own.status, 200, own.text);
      assert.equal(own.json.ownerId, A);
      assert.equal(own.json.spaceId, `user:${A}`);
      assert.equal(own.json.visibility, 'private');
      assert.equal(own.json.callerLevel, 'OWN');
      assert.deepEqual(own.json.grants, []);
      const byAdmin = await as('admin', 'GET', `/descriptorstore/descriptors/${agentOfA}`);
      assert.equal(byAdmin.json.callerLevel, 'OWN');
    });

    it('after A grants B USE, B sees, starts and talks to the agent but may not edit, deploy, delete or change grants', async () => {
      const granted = await as('userA', 'PUT', `/descriptorstore/descriptors/${agentOfA}/grants`, [
        { principal: B, level: 'USE' },
      ]);
      assert.equal(granted.status, 200, granted.text);
      assert.deepEqual(granted.json, [{ principal: B, level: 'USE' }]);

      assert.ok((await agentIdsListedFor('userB')).includes(agentOfA));
      const seen = await as('userB', 'GET', `/descriptorstore/descriptors/${agentOfA}`);
      assert.equal(seen.json.callerLevel, 'USE');
      assert.equal(seen.json.grants, undefined, 'grants are shown to the owner level only');
      const listed = (await as('userB', 'GET', '/agentstore/agents/descriptors?limit=0')).json.find(
        (d: { resource: string }) => d.resource.includes(agentOfA),
      );
      assert.equal(listed.callerLevel, 'USE');
      assert.equal(listed.grants, undefined);
      const ownerView = (await as('userA', 'GET', '/agentstore/agents/descriptors?limit=0')).json.find(
        (d: { resource: string }) => d.resource.includes(agentOfA),
      );
      assert.deepEqual(ownerView.grants, [{ principal: B, level: 'USE' }]);

      assert.equal((await as('userB', 'GET', `/agentstore/agents/${agentOfA}?version=1`)).status, 200);
      const started = await as('userB', 'POST', `/agents/${agentOfA}/start`);
      assert.equal(started.status, 201, started.text);
      assert.deepEqual(started.json.conversationOutputs[0].output, ['Welcome!']);
      const said = await as('userB', 'POST', `/agents/${idFromLocation(started.headers.get('location'))}`, {
        input: 'hello',
      });
      assert.equal(said.status, 200, said.text);

      const body = (await as('userA', 'GET', `/agentstore/agents/${agentOfA}?version=1`)).json;
      for (const [method, path, json] of [
        ['PUT', `/agentstore/agents/${agentOfA}?version=1`, body],
        ['POST', `/agentstore/agents/${agentOfA}?version=1`, undefined],
        ['PATCH', `/descriptorstore/descriptors/${agentOfA}`, { operation: 'SET', document: { name: 'taken over' } }],
        ['POST', `/administration/production/deploy/${agentOfA}?version=1`, undefined],
        ['DELETE', `/agentstore/agents/${agentOfA}?version=1`, undefined],
        ['GET', `/descriptorstore/descriptors/${agentOfA}/grants`, undefined],
        ['PUT', `/descriptorstore/descriptors/${agentOfA}/grants`, [{ principal: B, level: 'OWN' }]],
        ['PUT', `/descriptorstore/descriptors/${agentOfA}/visibility`, { visibility: 'public' }],
      ] as const) {
        const answer = await as('userB', method, path, json);
        assert.equal(answer.status, 403, `${method} ${path}: ${answer.text}`);
      }
    });

    it("EDIT lets B update and duplicate (the copy is B's own) but not delete", async () => {
      await as('userA', 'PUT', `/descriptorstore/descriptors/${agentOfA}/grants`, [{ principal: B, level: 'EDIT' }]);
      // Writing, deploying and exporting an agent needs USE on what it references as well (kept for later tests).
      for (const id of referencedBy.get(agentOfA)!) {
        await as('userA', 'PUT', `/descriptorstore/descriptors/${id}/grants`, [{ principal: B, level: 'USE' }]);
      }
      const body = (await as('userA', 'GET', `/agentstore/agents/${agentOfA}?version=1`)).json;
      const updated = await as('userB', 'PUT', `/agentstore/agents/${agentOfA}?version=1`, body);
      assert.equal(updated.status, 200, updated.text);
      const copy = await as('userB', 'POST', `/agentstore/agents/${agentOfA}?version=2`);
      assert.equal(copy.status, 201, copy.text);
      const copyDescriptor = await as(
        'userB',
        'GET',
        `/descriptorstore/descriptors/${idFromLocation(copy.headers.get('location'))}`,
      );
      assert.equal(copyDescriptor.json.ownerId, B);
      assert.equal(copyDescriptor.json.callerLevel, 'OWN');
      assert.equal((await as('userB', 'DELETE', `/agentstore/agents/${agentOfA}?version=2`)).status, 403);
      assert.equal((await as('userB', 'GET', `/descriptorstore/descriptors/${agentOfA}`)).json.callerLevel, 'EDIT');
      // Back to USE for the tests after this one.
      await as('userA', 'PUT', `/descriptorstore/descriptors/${agentOfA}/grants`, [{ principal: B, level: 'USE' }]);
    });

    it('bad grant lists are 400 problems', async () => {
      for (const body of [
        {},
        [{ principal: B }],
        [{ principal: B, level: 'ADMIN' }],
        [{ principal: '', level: 'USE' }],
        [{ principal: B, level: 'USE', extra: 1 }],
      ]) {
        const answer = await as('userA', 'PUT', `/descriptorstore/descriptors/${agentOfA}/grants`, body);
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /problem\+json/);
      }
    });

    it('a trigger may not reference an agent its author cannot use', async () => {
      const agentOfB = await agentOf('userB');
      const refused = await as('userA', 'POST', '/bottriggerstore/bottriggers', {
        intent: 'b-only',
        botDeployments: [{ environment: 'production', botId: agentOfB }],
      });
      assert.equal(refused.status, 403, refused.text);
      const allowed = await as('userB', 'POST', '/bottriggerstore/bottriggers', {
        intent: 'a-shared',
        botDeployments: [{ environment: 'production', botId: agentOfA }],
      });
      assert.equal(allowed.status, 200, allowed.text);
    });

    it("space visibility shares with the members of the resource's space; public with everybody", async () => {
      const shared = await as('userA', 'POST', '/outputstore/outputsets?space=group:team-blue', welcomeOutputs);
      assert.equal(shared.status, 201, shared.text);
      const sharedId = idFromLocation(shared.headers.get('location'));
      assert.equal(
        (await as('userA', 'POST', '/outputstore/outputsets?space=group:team-red', welcomeOutputs)).status,
        403,
      );
      assert.equal((await as('userC', 'GET', `/descriptorstore/descriptors/${sharedId}`)).status, 404);
      const changed = await as('userA', 'PUT', `/descriptorstore/descriptors/${sharedId}/visibility`, {
        visibility: 'space',
      });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.json.spaceId, 'group:team-blue');
      assert.equal((await as('userC', 'GET', `/descriptorstore/descriptors/${sharedId}`)).json.callerLevel, 'USE');
      assert.equal((await as('userB', 'GET', `/descriptorstore/descriptors/${sharedId}`)).status, 404);
      await as('userA', 'PUT', `/descriptorstore/descriptors/${sharedId}/visibility`, { visibility: 'public' });
      assert.equal((await as('userB', 'GET', `/descriptorstore/descriptors/${sharedId}`)).json.callerLevel, 'USE');
      assert.equal(
        (await as('userA', 'PUT', `/descriptorstore/descriptors/${sharedId}/visibility`, { visibility: 'everyone' }))
          .status,
        400,
      );
    });

    it('GET /workspaces describes the caller: A, B and the admin', async () => {
      const ofA = await as('userA', 'GET', '/workspaces');
      assert.equal(ofA.status, 200, ofA.text);
      assert.deepEqual(ofA.json, {
        enforcementActive: true,
        principal: A,
        defaultWriteSpace: `user:${A}`,
        seesEverything: false,
        spaces: [
          { id: `user:${A}`, name: A, type: 'personal' },
          { id: 'group:team-blue', name: 'team-blue', type: 'group' },
        ],
      });
      const ofB = await as('userB', 'GET', '/workspaces');
      assert.equal(ofB.json.principal, B);
      assert.deepEqual(
        ofB.json.spaces.map((space: { id: string }) => space.id),
        [`user:${B}`, 'group:team-red'],
      );
      const ofAdmin = await as('admin', 'GET', '/workspaces');
      assert.equal(ofAdmin.json.seesEverything, true);
      assert.equal(ofAdmin.json.enforcementActive, true);
      assert.equal(ofAdmin.json.principal, TEST_USERS.admin.name);
    });

    it('the admin sees and may do everything', async () => {
      assert.ok((await agentIdsListedFor('admin')).includes(agentOfA));
      assert.equal((await as('admin', 'GET', `/descriptorstore/descriptors/${agentOfA}/grants`)).status, 200);
    });

    it("the services check the rest: exports, downloads, imports, deployments, starts and other users' conversations", async () => {
      // C reaches A's group, but A's agent is private: C has no level on it, so it does not exist for C.
      for (const [method, path] of [
        ['POST', `/backup/export/${agentOfA}`],
        ['GET', `/backup/export/${agentOfA}-1.zip`],
        ['POST', `/bots/production/${agentOfA}`],
        ['POST', `/administration/production/deploy/${agentOfA}?version=1`],
        ['GET', `/agentstore/agents/${agentOfA}/currentversion`],
      ] as const) {
        assert.equal((await as('userC', method, path)).status, 404, `${method} ${path}`);
      }
      // B holds USE: exports and downloads it, but only an admin imports over existing resources.
      const exported = await as('userB', 'POST', `/backup/export/${agentOfA}`);
      assert.equal(exported.status, 200, exported.text);
      assert.equal((await as('userB', 'GET', exported.headers.get('location')!)).status, 200);
      const importing = (strategy: string) =>
        call(server.url, 'POST', `/backup/import?strategy=${strategy}`, {
          body: new Uint8Array([0x50, 0x4b, 0x05, 0x06]),
          headers: { authorization: `Bearer ${tokens.get('userB')}`, 'content-type': 'application/zip' },
        });
      const merge = await importing('merge');
      assert.equal(merge.status, 403, merge.text);
      assert.match(merge.json.detail, /strategy=create/);
      assert.equal((await importing('create')).status, 400, 'a create import gets as far as reading the (broken) ZIP');
      // A conversation is its user's own, on every path that names it (another user's is a 404, as an unknown one).
      const started = await as('userA', 'POST', `/agents/${agentOfA}/start`);
      assert.equal(started.status, 201, started.text);
      const conversationOfA = idFromLocation(started.headers.get('location'));
      for (const [method, path, status] of [
        ['GET', `/agents/${conversationOfA}`, 404],
        ['POST', `/agents/${conversationOfA}/endConversation`, 404],
        ['GET', `/bots/production/${agentOfA}/${conversationOfA}`, 404],
        ['DELETE', `/conversationstore/conversations/${conversationOfA}`, 404],
        ['GET', `/conversationstore/conversations?userId=${A}`, 403],
      ] as const) {
        const answer = await as('userB', method, path);
        assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
      }
      assert.equal((await as('userA', 'DELETE', `/conversationstore/conversations/${conversationOfA}`)).status, 200);
    });

    it('with enforcement off: no callerLevel, nothing enforced, but owners are still recorded', async () => {
      await server.restart({ 'svc.authorization.enabled': false, 'svc.workspaces.enabled': false });
      const descriptor = await as('userB', 'GET', `/descriptorstore/descriptors/${agentOfA}`);
      assert.equal(descriptor.status, 200, descriptor.text);
      assert.equal(descriptor.json.callerLevel, undefined);
      assert.equal(descriptor.json.grants, undefined);
      assert.equal(descriptor.json.ownerId, A);
      const created = await as('userB', 'POST', '/outputstore/outputsets', welcomeOutputs);
      const createdDescriptor = await as(
        'userA',
        'GET',
        `/descriptorstore/descriptors/${idFromLocation(created.headers.get('location'))}`,
      );
      assert.equal(createdDescriptor.json.ownerId, B);
      assert.equal(createdDescriptor.json.spaceId, `user:${B}`);
      assert.equal(createdDescriptor.json.callerLevel, undefined);
      const agentOfC = await agentOf('userC');
      assert.ok((await agentIdsListedFor('userB')).includes(agentOfC), 'listings are not filtered');
      assert.equal((await as('userB', 'GET', `/agentstore/agents/${agentOfC}?version=1`)).status, 200);
      const workspaces = await as('userB', 'GET', '/workspaces');
      assert.equal(workspaces.json.enforcementActive, false);
      assert.equal(workspaces.json.seesEverything, true);
      assert.equal(workspaces.json.principal, B);
    });
  });
}
