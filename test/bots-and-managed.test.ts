import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createAgent, deploy, idFromLocation, sayContext, welcomeOutputs } from './support/agents.ts';
import { controlExtension, controlTask } from './support/control-task.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

for (const storeType of storeTypes) {
  describe(`older bot paths and managed agents on ${storeType}`, () => {
    const { api } = serverOfBlock(storeType, {}, [controlTask]);
    let agentId: string;
    let otherAgentId: string;

    before(async () => {
      agentId = await createAgent(api, { extensions: [controlExtension], outputSet: welcomeOutputs });
      otherAgentId = await createAgent(api, { extensions: [controlExtension], outputSet: welcomeOutputs });
      await deploy(api, agentId);
      await deploy(api, otherAgentId);
    });

    it('/bots/{environment}/{botId}: start (201, no body), message, read, undo and redo', async () => {
      const started = await api.post(`/bots/unrestricted/${agentId}?userId=frank`);
      assert.equal(started.status, 201);
      assert.equal(started.text, '');
      const id = idFromLocation(started.headers.get('location'));
      const said = await api.post(`/bots/unrestricted/${agentId}/${id}`, {
        json: { input: 'hi', context: sayContext('Hello Frank') },
      });
      assert.equal(said.status, 200);
      assert.equal(said.json.botId, agentId);
      assert.equal(said.json.botVersion, 1);
      assert.equal(said.json.agentId, undefined);
      assert.deepEqual(said.json.conversationOutputs, [{ input: 'hi', output: ['Hello Frank'] }]);
      await api.post(`/bots/restricted/${agentId}/${id}`, { json: { input: 'again' } });
      const read = await api.get(`/bots/restricted/${agentId}/${id}`);
      assert.equal(read.json.conversationSteps.length, 3, 'the older read returns every step');
      assert.equal(
        (await api.get(`/bots/restricted/${agentId}/${id}?returnCurrentStepOnly=true`)).json.conversationSteps.length,
        1,
      );
      assert.equal((await api.get(`/bots/production/${agentId}/undo/${id}`)).json, true);
      assert.equal((await api.get(`/bots/production/${agentId}/redo/${id}`)).json, false);
      const undo = await api.post(`/bots/production/${agentId}/undo/${id}`);
      assert.equal(undo.status, 200);
      assert.equal(undo.text, '');
      assert.equal((await api.get(`/bots/production/${agentId}/redo/${id}`)).json, true);
      assert.equal((await api.post(`/bots/production/${agentId}/redo/${id}`)).status, 200);
      assert.equal((await api.get(`/bots/production/${agentId}/${id}`)).json.conversationSteps.length, 3);
      assert.equal((await api.post(`/bots/production/${agentId}/redo/${id}`)).status, 409);
    });

    it('/bots paths refuse a conversation of another bot or environment, and unknown ids', async () => {
      const id = idFromLocation((await api.post(`/bots/production/${agentId}`)).headers.get('location'));
      assert.equal((await api.get(`/bots/production/${otherAgentId}/${id}`)).status, 404);
      assert.equal((await api.get(`/bots/test/${agentId}/${id}`)).status, 404);
      assert.equal(
        (await api.post(`/bots/production/${agentId}/0123456789abcdef01234567`, { json: { input: 'x' } })).status,
        404,
      );
      assert.equal((await api.post('/bots/production/0123456789abcdef01234567')).status, 404);
      assert.equal((await api.post(`/bots/nowhere/${agentId}`)).status, 400);
    });

    it('bot triggers: create, read, update, delete by intent, with validation', async () => {
      const trigger = { intent: 'weather', botDeployments: [{ environment: 'production', botId: agentId }] };
      assert.equal((await api.post('/bottriggerstore/bottriggers', { json: trigger })).status, 200);
      assert.equal((await api.post('/bottriggerstore/bottriggers', { json: trigger })).status, 409);
      const read = await api.get('/bottriggerstore/bottriggers/weather');
      assert.deepEqual(read.json, {
        intent: 'weather',
        botDeployments: [{ environment: 'production', botId: agentId, initialContext: {} }],
      });
      const updated = await api.put('/bottriggerstore/bottriggers/weather', {
        json: { botDeployments: [{ environment: 'unrestricted', botId: otherAgentId }] },
      });
      assert.equal(updated.status, 200);
      assert.equal((await api.get('/bottriggerstore/bottriggers/weather')).json.botDeployments[0].botId, otherAgentId);
      assert.ok((await api.get('/bottriggerstore/bottriggers')).json.some((t: any) => t.intent === 'weather'));
      assert.equal(
        (await api.post('/bottriggerstore/bottriggers', { json: { intent: 'x', botDeployments: [] } })).status,
        400,
      );
      assert.equal(
        (await api.post('/bottriggerstore/bottriggers', { json: { intent: 'x', botDeployments: [{ botId: 'nope' }] } }))
          .status,
        400,
      );
      assert.equal(
        (await api.post('/bottriggerstore/bottriggers', { json: { botDeployments: [{ botId: agentId }] } })).status,
        400,
      );
      const mismatch = await api.put('/bottriggerstore/bottriggers/weather', {
        json: { intent: 'rain', botDeployments: [{ botId: agentId }] },
      });
      assert.equal(mismatch.status, 400);
      const upstream = await api.post('/AgentTriggerStore/agenttriggers', {
        json: { intent: 'upstream', agentDeployments: [{ environment: 'production', agentId }] },
      });
      assert.equal(upstream.status, 200, upstream.text);
      assert.equal((await api.get('/bottriggerstore/bottriggers/upstream')).json.botDeployments[0].botId, agentId);
      assert.equal((await api.delete('/bottriggerstore/bottriggers/weather')).status, 200);
      assert.equal((await api.get('/bottriggerstore/bottriggers/weather')).status, 404);
      assert.equal((await api.delete('/bottriggerstore/bottriggers/weather')).status, 404);
    });

    it('/managedbots: one conversation per user and intent; initialContext reaches the first step only; end starts anew', async () => {
      await api.put('/bottriggerstore/bottriggers/support', {
        json: {
          intent: 'support',
          botDeployments: [
            {
              environment: 'production',
              botId: agentId,
              initialContext: { channel: { type: 'string', value: 'web' } },
            },
          ],
        },
      });
      const first = await api.get('/managedbots/support/grace');
      assert.equal(first.status, 200);
      const conversationId = first.json.conversationId;
      assert.equal(first.json.userId, 'grace');
      const said = await api.post('/managedbots/support/grace?returnCurrentStepOnly=false&returnDetailed=true', {
        json: { input: 'help', context: sayContext('How can I help?') },
      });
      assert.equal(said.status, 200);
      assert.equal(said.json.conversationId, conversationId);
      assert.deepEqual(said.json.conversationOutputs[1].output, ['How can I help?']);
      assert.deepEqual(
        said.json.conversationOutputs[0].context,
        { channel: 'web' },
        'the first step got the initial context',
      );
      assert.equal(said.json.conversationOutputs[1].context.channel, undefined, 'later steps did not');
      assert.equal((await api.get('/managedbots/support/grace')).json.conversationId, conversationId);
      assert.notEqual((await api.get('/managedbots/support/heidi')).json.conversationId, conversationId);
      assert.equal((await api.post('/managedbots/support/grace/endConversation')).status, 200);
      assert.equal((await api.get(`/agents/${conversationId}`)).json.conversationState, 'ENDED');
      const renewed = await api.post('/managedbots/support/grace', { json: { input: 'again' } });
      assert.notEqual(renewed.json.conversationId, conversationId);
      assert.equal((await api.get('/managedbots/nosuchintent/grace')).status, 404);
      assert.equal((await api.post('/managedbots/support/ivan/endConversation')).status, 404);
    });

    it('managed conversations pick among the trigger deployments', async () => {
      await api.put('/bottriggerstore/bottriggers/either', {
        json: {
          botDeployments: [
            { environment: 'production', botId: agentId },
            { environment: 'production', botId: otherAgentId },
          ],
        },
      });
      const seen = new Set<string>();
      for (let n = 0; n < 40 && seen.size < 2; n++)
        seen.add((await api.get(`/managedbots/either/user${n}`)).json.agentId);
      assert.deepEqual([...seen].sort(), [agentId, otherAgentId].sort());
    });
  });
}
