import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deploy, idFromLocation } from './support/agents.ts';
import type { TestUserKey } from './support/oidc.ts';
import { storeTypes } from './support/server.ts';
import { startWorkspaceServer, type WorkspaceServer } from './support/workspaces.ts';

/**
 * Schedules and access (issue 18; spec: schedules must not reference an agent the author lacks USE on). Alice (A)
 * owns an agent; Bob (B) is an editor of another workspace.
 */
for (const storeType of storeTypes) {
  describe(`schedules and access levels, on ${storeType}`, () => {
    let workspaces: WorkspaceServer;
    const as: WorkspaceServer['as'] = (...args) => workspaces.as(...args);
    let agentOfA: string;
    const scheduleFor = (agentId: string) => ({ agentId, intervalSeconds: 3600, message: 'hello' });

    before(async () => {
      workspaces = await startWorkspaceServer(storeType);
      const workflow = await as('userA', 'POST', '/packagestore/packages', { packageExtensions: [] });
      const agent = await as('userA', 'POST', '/agentstore/agents', { packages: [workflow.headers.get('location')] });
      assert.equal(agent.status, 201, agent.text);
      agentOfA = idFromLocation(agent.headers.get('location'));
      const apiOfA = { post: (path: string) => as('userA' as TestUserKey, 'POST', path) };
      await deploy(apiOfA as never, agentOfA);
    });
    after(() => workspaces?.dispose());

    it('a schedule may target only an agent its author can use; its runs are read with USE on the schedule', async () => {
      const refused = await as('userB', 'POST', '/schedulestore/schedules', scheduleFor(agentOfA));
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.json.detail, /\$\.agentId.*USE access is needed on the agent/);

      const created = await as('userA', 'POST', '/schedulestore/schedules', scheduleFor(agentOfA));
      assert.equal(created.status, 201, created.text);
      const id = idFromLocation(created.headers.get('location'));
      assert.equal((await as('userA', 'GET', `/schedulestore/schedules/${id}/runs`)).status, 200);
      assert.equal((await as('userB', 'GET', `/schedulestore/schedules/${id}/runs`)).status, 404);

      const retargeted = await as('userB', 'POST', '/schedulestore/schedules', scheduleFor('0123456789abcdef01234567'));
      assert.equal(retargeted.status, 400, 'an agent that does not exist is refused the same way');
    });
  });
}
