import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deployAgent, idFromLocation, sayContext } from './support/agents.ts';
import { call, client } from './support/http.ts';
import { deployedOn, startInstances, type Instances } from './support/instances.ts';
import type { RunningServer } from '../src/server.ts';

/** Schedules with several instances on one PostgreSQL database: each due run fires on exactly one of them. */
describe('schedules on several instances', () => {
  let cluster: Instances | undefined;
  let instances: RunningServer[] = [];
  let now = Date.parse('2026-03-02T08:00:30Z');

  before(async () => {
    cluster = await startInstances(3, { 'svc.schedules.poll-interval-millis': 0 }, { clock: () => now });
    instances = cluster.servers;
  });
  after(() => cluster?.close());

  it('three instances looking at the same moment: every due time runs once, each in one conversation', async () => {
    const api = client(() => instances[0]!.url);
    const agentId = await deployAgent(api, { outputSet: { outputSet: [] } });
    const schedules: string[] = [];
    for (const conversation of ['new', 'persistent']) {
      const created = await api.post('/schedulestore/schedules', {
        json: { agentId, intervalSeconds: 60, message: 'tick', conversation, context: sayContext('tock') },
      });
      assert.equal(created.status, 201, created.text);
      schedules.push(idFromLocation(created.headers.get('location')));
    }
    // The agent is deployed on the others too (deployments propagate by notification).
    for (const instance of instances) await deployedOn(instance.url, agentId);

    for (let minute = 1; minute <= 5; minute++) {
      now += 60_000;
      await Promise.all(instances.flatMap((instance) => [instance.scheduler.tick(), instance.scheduler.tick()]));
    }

    for (const [index, id] of schedules.entries()) {
      const answer = await call(instances[index + 1]!.url, 'GET', `/schedulestore/schedules/${id}/runs`);
      assert.equal(answer.status, 200, answer.text);
      const { runs } = answer.json;
      assert.equal(runs.length, 5, 'five due times, five runs');
      assert.deepEqual(new Set(runs.map((run: { outcome: string }) => run.outcome)), new Set(['OK']));
      assert.equal(new Set(runs.map((run: { dueOn: number }) => run.dueOn)).size, 5);
      const conversationIds = new Set(runs.map((run: { conversationId: string }) => run.conversationId));
      assert.equal(conversationIds.size, index === 0 ? 5 : 1);
      for (const conversationId of conversationIds) {
        const conversation = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
        const inputs = conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input);
        assert.deepEqual(inputs, index === 0 ? ['tick'] : ['tick', 'tick', 'tick', 'tick', 'tick']);
      }
    }
  });
});
