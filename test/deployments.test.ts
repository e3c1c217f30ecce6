import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createAgent, deploy, idFromLocation, welcomeOutputs } from './support/agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

for (const storeType of storeTypes) {
  describe(`deployment on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;

    const status = async (agentId: string, version = 1, environment = 'production') =>
      (await api.get(`/administration/${environment}/deploymentstatus/${agentId}?version=${version}`)).json;

    it('deploy answers 202 at once and compiles in the background: NOT_FOUND -> IN_PROGRESS/READY', async () => {
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      assert.equal((await status(agentId)).status, 'NOT_FOUND');
      const accepted = await api.post(`/administration/production/deploy/${agentId}?version=1`);
      assert.equal(accepted.status, 202);
      assert.ok(['IN_PROGRESS', 'READY'].includes(accepted.json.status));
      let current = await status(agentId);
      for (let tries = 0; current.status === 'IN_PROGRESS' && tries < 100; tries++) {
        await sleep(20);
        current = await status(agentId);
      }
      assert.equal(current.status, 'READY');
      const text = await api.get(`/administration/production/deploymentstatus/${agentId}?version=1&format=text`);
      assert.match(text.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(text.text, 'READY');
      const again = await api.post(`/administration/production/deploy/${agentId}?version=1`);
      assert.equal(again.status, 202);
      assert.equal(again.json.status, 'READY', 'deploying a READY version changes nothing');
    });

    it('an unknown agent or version answers 404 at once; bad parameters 400', async () => {
      assert.equal(
        (await api.post('/administration/production/deploy/0123456789abcdef01234567?version=1')).status,
        404,
      );
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      assert.equal((await api.post(`/administration/production/deploy/${agentId}?version=2`)).status, 404);
      assert.equal((await api.post(`/administration/production/deploy/${agentId}?version=two`)).status, 400);
      assert.equal((await api.post(`/administration/staging/deploy/${agentId}?version=1`)).status, 400);
      assert.equal((await api.get(`/administration/production/deploymentstatus/${agentId}`)).status, 400);
    });

    it('a missing referenced resource or an unknown extension type gives ERROR with the reason', async () => {
      const missingOutput = await createAgent(api, {
        extensions: [
          {
            type: 'svc://ai.svc.output',
            config: { uri: 'svc://ai.svc.output/outputstore/outputsets/0123456789abcdef01234567?version=1' },
          },
        ],
      });
      const failed = await api.post(
        `/administration/production/deploy/${missingOutput}?version=1&waitForCompletion=true`,
      );
      assert.equal(failed.status, 200);
      assert.equal(failed.json.status, 'ERROR');
      assert.match(
        failed.json.error,
        /output set svc:\/\/ai\.svc\.output\/outputstore\/outputsets\/0123456789abcdef01234567\?version=1 does not exist/,
      );
      assert.equal((await status(missingOutput)).error, failed.json.error);

      const unknownType = await createAgent(api, { extensions: [{ type: 'svc://ai.svc.teleporter', config: {} }] });
      const unknown = await api.post(
        `/administration/production/deploy/${unknownType}?version=1&waitForCompletion=true`,
      );
      assert.equal(unknown.json.status, 'ERROR');
      assert.match(unknown.json.error, /Unknown extension type 'svc:\/\/ai\.svc\.teleporter'.*packageExtensions\[0\]/);

      const missingWorkflow = await api.post('/agentstore/agents', {
        json: { packages: ['svc://ai.svc.package/packagestore/packages/0123456789abcdef01234567?version=3'] },
      });
      const missingWorkflowId = idFromLocation(missingWorkflow.headers.get('location'));
      const noWorkflow = await api.post(
        `/administration/production/deploy/${missingWorkflowId}?version=1&waitForCompletion=true`,
      );
      assert.equal(noWorkflow.json.status, 'ERROR');
      assert.match(noWorkflow.json.error, /workflow .* does not exist/);
      assert.equal(
        (await api.post(`/agents/${missingWorkflowId}/start`)).status,
        404,
        'no conversation with an agent in ERROR',
      );
    });

    it('version defaults to the current one; environments map; the check endpoint spans environments', async () => {
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      const deployed = await api.post(`/administration/unrestricted/deploy/${agentId}?waitForCompletion=true`);
      assert.equal(deployed.json.environment, 'production');
      assert.equal(deployed.json.agentVersion, 1);
      await deploy(api, agentId, 1, 'test');
      const check = await api.get(`/administration/deploy/${agentId}`);
      assert.equal(check.status, 200);
      assert.deepEqual(Object.keys(check.json.environments).sort(), ['production', 'test']);
      assert.equal(check.json.environments.production[0].status, 'READY');
      assert.equal(check.json.environments.test[0].status, 'READY');
      const list = await api.get('/administration/test/deploymentstatus');
      assert.ok(list.json.some((d: any) => d.agentId === agentId && d.environment === 'test'));
      const all = await api.get('/deploymentstore/deployments');
      assert.equal(all.json.filter((d: any) => d.agentId === agentId).length, 2);
      const started = await api.post(`/agents/${agentId}/start?environment=test`);
      assert.equal(started.status, 201);
      assert.equal(started.json.environment, 'test');
    });

    it('conversations start with the newest READY version', async () => {
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      const v1 = await api.get(`/agentstore/agents/${agentId}?version=1`);
      await api.put(`/agentstore/agents/${agentId}?version=1`, { json: v1.json });
      await deploy(api, agentId, 1);
      await deploy(api, agentId, 2);
      assert.equal((await api.post(`/agents/${agentId}/start`)).json.agentVersion, 2);
    });

    it('undeploy: new conversations are refused, running ones go on with their version', async () => {
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      await deploy(api, agentId);
      const running = await api.post(`/agents/${agentId}/start`);
      const undeployed = await api.post(`/administration/production/undeploy/${agentId}?version=1`);
      assert.equal(undeployed.status, 202);
      assert.equal(undeployed.json.undeployed, true);
      assert.equal((await status(agentId)).status, 'NOT_FOUND');
      const refused = await api.post(`/agents/${agentId}/start`);
      assert.equal(refused.status, 404);
      assert.match(refused.json.detail, /not deployed/);
      const message = await api.post(`/agents/${running.json.conversationId}`, { json: { input: 'still here' } });
      assert.equal(message.status, 200);
      assert.equal((await api.post(`/administration/production/undeploy/${agentId}?version=1`)).json.undeployed, false);
    });

    it('deployments with autoDeploy survive a restart; autoDeploy=false ones do not', async () => {
      const kept = await createAgent(api, { outputSet: welcomeOutputs });
      const transient = await createAgent(api, { outputSet: welcomeOutputs });
      await deploy(api, kept, 1, 'production', true);
      await deploy(api, transient, 1, 'production', false);
      await block.server.restart();
      assert.equal((await status(kept)).status, 'READY');
      assert.equal((await status(transient)).status, 'NOT_FOUND');
      assert.equal((await api.post(`/agents/${kept}/start`)).status, 201);
    });
  });
}
