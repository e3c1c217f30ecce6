import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deploy, idFromLocation, welcomeOutputs } from './support/agents.ts';
import type { Answer } from './support/http.ts';
import { TEST_USERS, type TestUserKey } from './support/oidc.ts';
import { storeTypes } from './support/server.ts';
import { startWorkspaceServer, type WorkspaceServer } from './support/workspaces.ts';

/**
 * Triggers have owners (issue 13, item 3): another editor can neither overwrite nor delete an intent trigger and
 * reroute its users to their own agent. Alice (A) owns the trigger; Bob (B) is an editor of another workspace;
 * Carol (C) shares A's group.
 */

const A = TEST_USERS.userA.name;
const B = TEST_USERS.userB.name;
const C = TEST_USERS.userC.name;

for (const storeType of storeTypes) {
  describe(`triggers have owners, spaces and levels, on ${storeType}`, () => {
    let workspaces: WorkspaceServer;
    const as: WorkspaceServer['as'] = (...args) => workspaces.as(...args);
    const apiOf = (user: TestUserKey) => ({ post: (path: string) => as(user, 'POST', path) });
    /** A deployed agent of `user` (everything it references is the user's too) greeting with `text`. */
    const agentOf = async (user: TestUserKey, text: string): Promise<string> => {
      const outputs = await as(user, 'POST', '/outputstore/outputsets', {
        outputSet: [{ ...welcomeOutputs.outputSet[0], outputs: [{ valueAlternatives: [{ type: 'text', text }] }] }],
      });
      assert.equal(outputs.status, 201, outputs.text);
      const workflow = await as(user, 'POST', '/packagestore/packages', {
        packageExtensions: [{ type: 'svc://ai.svc.output', config: { uri: outputs.headers.get('location') } }],
      });
      const agent = await as(user, 'POST', '/agentstore/agents', { packages: [workflow.headers.get('location')] });
      assert.equal(agent.status, 201, agent.text);
      const id = idFromLocation(agent.headers.get('location'));
      await deploy(apiOf(user) as never, id);
      return id;
    };
    const triggerTo = (agentId: string) => ({ botDeployments: [{ environment: 'production', botId: agentId }] });
    const intents = async (user: TestUserKey): Promise<string[]> => {
      const answer = await as(user, 'GET', '/bottriggerstore/bottriggers');
      assert.equal(answer.status, 200, answer.text);
      return answer.json.map((trigger: { intent: string }) => trigger.intent);
    };
    const greetingOf = async (user: TestUserKey, userId: string): Promise<Answer> =>
      as(user, 'GET', `/managedbots/help/${userId}`);

    let agentOfA: string;
    let agentOfB: string;

    before(async () => {
      workspaces = await startWorkspaceServer(storeType);
      agentOfA = await agentOf('userA', 'Alice helps');
      agentOfB = await agentOf('userB', 'Bob took over');
      const created = await as('userA', 'POST', '/bottriggerstore/bottriggers', {
        intent: 'help',
        ...triggerTo(agentOfA),
      });
      assert.equal(created.status, 200, created.text);
    });
    after(async () => {
      await workspaces?.dispose();
    });

    it("B can neither overwrite nor delete A's trigger: it does not exist for B (404), and A's users stay with A's agent", async () => {
      const overwrite = await as('userB', 'PUT', '/bottriggerstore/bottriggers/help', triggerTo(agentOfB));
      assert.equal(overwrite.status, 404, overwrite.text);
      assert.equal((await as('userB', 'DELETE', '/bottriggerstore/bottriggers/help')).status, 404);
      assert.equal((await as('userB', 'GET', '/bottriggerstore/bottriggers/help')).status, 404);
      assert.equal((await as('userB', 'GET', '/bottriggerstore/bottriggers/help/grants')).status, 404);
      assert.equal(
        (await as('userB', 'PUT', '/bottriggerstore/bottriggers/help/visibility', { visibility: 'public' })).status,
        404,
      );
      assert.ok(!(await intents('userB')).includes('help'), 'left out of B’s list');
      assert.equal((await greetingOf('userB', B)).status, 404, 'B cannot converse through it either');
      const taken = await as('userB', 'POST', '/bottriggerstore/bottriggers', {
        intent: 'help',
        ...triggerTo(agentOfB),
      });
      assert.equal(taken.status, 409, taken.text);

      const ofA = await greetingOf('userA', A);
      assert.equal(ofA.status, 200, ofA.text);
      assert.deepEqual(ofA.json.conversationOutputs[0].output, ['Alice helps']);
      const access = await as('userA', 'GET', '/bottriggerstore/bottriggers/help/grants');
      assert.equal(access.status, 200, access.text);
      assert.deepEqual(access.json, {
        intent: 'help',
        ownerId: A,
        spaceId: `user:${A}`,
        visibility: 'private',
        grants: [],
      });
    });

    it('USE lets B read the trigger and converse through it, not change it; EDIT lets B replace it, not delete it', async () => {
      const granted = await as('userA', 'PUT', '/bottriggerstore/bottriggers/help/grants', [
        { principal: B, level: 'USE' },
      ]);
      assert.equal(granted.status, 200, granted.text);
      assert.deepEqual(granted.json.grants, [{ principal: B, level: 'USE' }]);
      assert.equal((await as('userB', 'GET', '/bottriggerstore/bottriggers/help')).status, 200);
      assert.ok((await intents('userB')).includes('help'));
      const ofB = await greetingOf('userB', B);
      assert.equal(ofB.status, 200, ofB.text);
      assert.deepEqual(ofB.json.conversationOutputs[0].output, ['Alice helps']);
      for (const [method, path, json] of [
        ['PUT', '/bottriggerstore/bottriggers/help', triggerTo(agentOfB)],
        ['DELETE', '/bottriggerstore/bottriggers/help', undefined],
        ['GET', '/bottriggerstore/bottriggers/help/grants', undefined],
        ['PUT', '/bottriggerstore/bottriggers/help/grants', [{ principal: B, level: 'OWN' }]],
      ] as const) {
        const answer = await as('userB', method, path, json);
        assert.equal(answer.status, 403, `${method} ${path}: ${answer.text}`);
      }

      await as('userA', 'PUT', '/bottriggerstore/bottriggers/help/grants', [{ principal: B, level: 'EDIT' }]);
      const replaced = await as('userB', 'PUT', '/bottriggerstore/bottriggers/help', triggerTo(agentOfB));
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal((await as('userB', 'DELETE', '/bottriggerstore/bottriggers/help')).status, 403);
      const access = await as('userA', 'GET', '/bottriggerstore/bottriggers/help/grants');
      assert.equal(access.json.ownerId, A, 'a replace keeps the owner');
    });

    it('space visibility shares the trigger with the members of its space; the owner deletes it', async () => {
      assert.equal((await as('userC', 'GET', '/bottriggerstore/bottriggers/help')).status, 404);
      const shared = await as('userA', 'PUT', '/bottriggerstore/bottriggers/help/visibility', {
        visibility: 'space',
        spaceId: 'group:team-blue',
      });
      assert.equal(shared.status, 200, shared.text);
      assert.equal(shared.json.spaceId, 'group:team-blue');
      assert.equal((await as('userC', 'GET', '/bottriggerstore/bottriggers/help')).status, 200);
      assert.equal((await greetingOf('userC', C)).status, 200);
      assert.equal((await as('userC', 'DELETE', '/bottriggerstore/bottriggers/help')).status, 403);
      assert.equal((await as('userA', 'DELETE', '/bottriggerstore/bottriggers/help')).status, 200);
      assert.equal((await as('userA', 'GET', '/bottriggerstore/bottriggers/help')).status, 404);
    });
  });
}
