import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deploy, idFromLocation } from './support/agents.ts';
import type { TestUserKey } from './support/oidc.ts';
import { storeTypes } from './support/server.ts';
import { startWorkspaceServer, type WorkspaceServer } from './support/workspaces.ts';

/**
 * Groups and access (issue 18): writing a group needs USE on every agent it names; starting or continuing a
 * discussion needs USE on the group and on every member agent. Alice (A) owns the agents; Bob (B) is an editor of
 * another workspace.
 */
for (const storeType of storeTypes) {
  describe(`groups and access levels, on ${storeType}`, () => {
    let workspaces: WorkspaceServer;
    const as: WorkspaceServer['as'] = (...args) => workspaces.as(...args);
    const publish = async (id: string) => {
      const answer = await as('userA', 'PUT', `/descriptorstore/descriptors/${id}/visibility`, {
        visibility: 'public',
      });
      assert.equal(answer.status, 200, answer.text);
    };
    const agentOfA = async () => {
      const workflow = await as('userA', 'POST', '/packagestore/packages', { packageExtensions: [] });
      await publish(idFromLocation(workflow.headers.get('location')));
      const agent = await as('userA', 'POST', '/agentstore/agents', { packages: [workflow.headers.get('location')] });
      assert.equal(agent.status, 201, agent.text);
      const id = idFromLocation(agent.headers.get('location'));
      await deploy({ post: (path: string) => as('userA' as TestUserKey, 'POST', path) } as never, id);
      return id;
    };
    let member = '';
    let moderator = '';

    before(async () => {
      workspaces = await startWorkspaceServer(storeType);
      member = await agentOfA();
      moderator = await agentOfA();
    });
    after(() => workspaces?.dispose());

    it('a group names only agents its author can use; a discussion needs USE on the group and on every agent in it', async () => {
      const group = {
        members: [{ agentId: member, displayName: 'Expert' }],
        moderatorAgentId: moderator,
        style: 'ROUND_TABLE',
      };
      const refused = await as('userB', 'POST', '/groupstore/groups', group);
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.json.detail, /\$\.members\[0\]\.agentId.*USE access is needed on the agent/);

      const created = await as('userA', 'POST', '/groupstore/groups', group);
      assert.equal(created.status, 201, created.text);
      const groupId = idFromLocation(created.headers.get('location'));
      const ask = (user: TestUserKey) => as(user, 'POST', `/groups/${groupId}/conversations`, { input: 'Ready?' });

      assert.equal((await ask('userB')).status, 404, 'the group is not visible to B');
      await publish(groupId);
      const withoutAgents = await ask('userB');
      assert.equal(withoutAgents.status, 404, withoutAgents.text);
      assert.match(withoutAgents.json.detail, /agent/);
      await publish(member);
      assert.equal((await ask('userB')).status, 404, 'the moderator is not usable by B yet');
      await publish(moderator);
      const allowed = await ask('userB');
      assert.equal(allowed.status, 201, allowed.text);
      const owned = await ask('userA');
      assert.equal(owned.status, 201, owned.text);
      assert.equal(
        (await as('userB', 'DELETE', `/groups/${groupId}/conversations/${allowed.json.id}`)).status,
        403,
        'deleting a transcript needs EDIT on the group',
      );
    });
  });
}
