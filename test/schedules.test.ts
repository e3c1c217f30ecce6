import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployAgent, exportAndImportAgent, idFromLocation, sayContext } from './support/agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** Schedules (issue 18): a versioned resource whose due runs send a message through the ordinary conversation path. */

const MINUTE = 60_000;
const start = Date.parse('2026-03-02T08:00:30Z'); // a Monday

for (const store of storeTypes) {
  describe(`schedules (${store})`, () => {
    let now = start;
    const block = serverOfBlock(
      store,
      { 'svc.schedules.poll-interval-millis': 0, 'svc.schedules.missed-after-seconds': 120 },
      [],
      { clock: () => now },
    );
    const { api } = block;
    const tick = () => block.server.server.scheduler.tick();
    const history = async (id: string) => {
      const answer = await api.get(`/schedulestore/schedules/${id}/runs`);
      assert.equal(answer.status, 200, answer.text);
      return answer.json;
    };
    const createSchedule = async (body: Record<string, unknown>) => {
      const created = await api.post('/schedulestore/schedules', { json: body });
      assert.equal(created.status, 201, created.text);
      return idFromLocation(created.headers.get('location'));
    };
    const echoAgent = () => deployAgent(api, { outputSet: { outputSet: [] } });

    it('a cron schedule fires once per due time, in its time zone, and each run starts a conversation with the message and context', async () => {
      now = start;
      const agentId = await echoAgent();
      const id = await createSchedule({
        agentId,
        cron: '0 10 * * 1-5',
        timeZone: 'Europe/Berlin',
        message: 'good morning',
        context: sayContext('Here is your briefing'),
      });
      const before = await history(id);
      assert.equal(before.nextRunOn, Date.parse('2026-03-02T09:00:00Z'), '10:00 in Berlin is 09:00 UTC in March');
      assert.deepEqual(before.runs, []);

      await tick();
      assert.deepEqual((await history(id)).runs, [], 'nothing is due before 09:00 UTC');

      now = Date.parse('2026-03-02T09:00:05Z');
      await Promise.all([tick(), tick()]);
      await tick();
      const { runs, nextRunOn } = await history(id);
      assert.equal(runs.length, 1, 'one run for the due time, however often the instance looks');
      const [run] = runs;
      assert.equal(run.outcome, 'OK', JSON.stringify(run));
      assert.equal(run.dueOn, Date.parse('2026-03-02T09:00:00Z'));
      assert.equal(run.startedOn, now);
      assert.equal(nextRunOn, Date.parse('2026-03-03T09:00:00Z'));

      const conversation = await api.get(`/agents/${run.conversationId}?returnDetailed=false`);
      assert.equal(conversation.status, 200, conversation.text);
      const outputs = conversation.json.conversationOutputs;
      assert.equal(outputs.at(-1).input, 'good morning');
      assert.deepEqual(outputs.at(-1).output, ['Here is your briefing']);
      assert.equal(conversation.json.userId, `schedule-${id}`);
    });

    it('a heartbeat with a persistent conversation sends every run to the same conversation', async () => {
      now = start;
      const agentId = await echoAgent();
      const id = await createSchedule({
        agentId,
        intervalSeconds: 60,
        message: 'ping',
        conversation: 'persistent',
        context: sayContext('pong'),
      });
      for (let minute = 1; minute <= 3; minute++) {
        now = start + minute * MINUTE + 1000;
        await tick();
      }
      const { runs } = await history(id);
      assert.deepEqual(
        runs.map((run: { outcome: string }) => run.outcome),
        ['OK', 'OK', 'OK'],
      );
      assert.equal(new Set(runs.map((run: { conversationId: string }) => run.conversationId)).size, 1);
      const conversation = await api.get(`/agents/${runs[0].conversationId}?returnCurrentStepOnly=false`);
      assert.deepEqual(
        conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input),
        ['ping', 'ping', 'ping'],
      );
    });

    it('runs missed while every instance was down are skipped, or caught up once with missedRuns catchUp', async () => {
      now = start;
      const agentId = await echoAgent();
      const skipping = await createSchedule({ agentId, cron: '*/5 * * * *', message: 'tick' });
      const catching = await createSchedule({ agentId, cron: '*/5 * * * *', message: 'tick', missedRuns: 'catchUp' });
      now = start + 60 * MINUTE; // twelve due times passed, the latest 30 s ago: not missed
      await tick();
      now += 60 * MINUTE; // twelve more, the latest 30 s ago
      now += 4 * MINUTE; // ... and now found 4.5 minutes late
      await tick();
      const skipped = (await history(skipping)).runs;
      assert.deepEqual(
        skipped.map((run: { outcome: string }) => run.outcome),
        ['SKIPPED', 'OK'],
      );
      assert.match(skipped[0].detail, /missedRuns: skip/);
      assert.equal(skipped[0].conversationId, undefined);
      const caught = (await history(catching)).runs;
      assert.deepEqual(
        caught.map((run: { outcome: string }) => run.outcome),
        ['OK', 'OK'],
        'one run for all the missed ones',
      );
      assert.equal(caught[0].dueOn, Date.parse('2026-03-02T10:00:00Z'));
    });

    it('a disabled schedule does not run; an agent that is not deployed makes the run FAILED with the reason', async () => {
      now = start;
      const agentId = await echoAgent();
      const disabled = await createSchedule({ agentId, intervalSeconds: 30, message: 'x', enabled: false });
      const undeployedAgent = idFromLocation(
        (await api.post('/agentstore/agents', { json: { packages: [] } })).headers.get('location'),
      );
      const failing = await createSchedule({ agentId: undeployedAgent, intervalSeconds: 30, message: 'x' });
      now = start + MINUTE;
      await tick();
      const off = await history(disabled);
      assert.deepEqual(off.runs, []);
      assert.equal(off.enabled, false);
      assert.equal(off.nextRunOn, undefined);
      const [run] = (await history(failing)).runs;
      assert.equal(run.outcome, 'FAILED');
      assert.match(run.detail, /not deployed/);
    });

    it('bad schedules answer 400 naming the field; an unknown schedule has no history (404)', async () => {
      const agentId = '0123456789abcdef01234567';
      const refused = async (body: Record<string, unknown>, pattern: RegExp) => {
        const answer = await api.post('/schedulestore/schedules', { json: body });
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.match(answer.json.detail, pattern);
      };
      await refused({ agentId, cron: '0 9 * *', message: 'x' }, /\$\.cron.*five fields/);
      await refused({ agentId, cron: '0 99 * * *', message: 'x' }, /\$\.cron/);
      await refused({ agentId, cron: '0 9 * * *', timeZone: 'Mars/Olympus', message: 'x' }, /IANA time zone/);
      await refused({ agentId, message: 'x' }, /either cron or intervalSeconds/);
      await refused({ agentId, cron: '0 9 * * *', intervalSeconds: 60, message: 'x' }, /not both/);
      await refused({ agentId, intervalSeconds: 60, timeZone: 'UTC', message: 'x' }, /timeZone is read only with cron/);
      await refused({ agentId, intervalSeconds: 0, message: 'x' }, /intervalSeconds/);
      await refused({ agentId: 'nope', intervalSeconds: 60, message: 'x' }, /agentId/);
      await refused({ agentId, intervalSeconds: 60, message: 'x', environment: 'staging' }, /environment/);
      await refused({ agentId, intervalSeconds: 60, message: 'x', conversation: 'forever' }, /conversation/);
      await refused({ agentId, intervalSeconds: 60, message: 'x', missedRuns: 'all' }, /missedRuns/);
      await refused(
        { agentId, intervalSeconds: 60, message: 'x', context: { a: { type: 'number', value: 1 } } },
        /context/,
      );
      await refused({ agentId, intervalSeconds: 60, message: 'x', repeat: true }, /repeat/);
      assert.equal((await api.get('/schedulestore/schedules/0123456789abcdef01234567/runs')).status, 404);
    });

    it('is exported with the agent it messages and imported for the imported agent, where it runs', async () => {
      now = start;
      const agentId = await echoAgent();
      const id = await createSchedule({ agentId, intervalSeconds: 60, message: 'exported', context: sayContext('ok') });
      const otherAgent = await echoAgent();
      await createSchedule({ agentId: otherAgent, intervalSeconds: 60, message: 'not mine' });

      const { entries, imported: result } = await exportAndImportAgent(api, block.server.url, agentId);
      const scheduleFiles = entries.filter((name) => name.endsWith('.schedule.json'));
      assert.deepEqual(scheduleFiles, [`${id}/1/${id}.schedule.json`], 'only the schedule of the exported agent');

      const copy = result.resources.find((resource: { kind: string }) => resource.kind === 'schedule');
      assert.equal(copy.originId, id);
      const body = (await api.get(`/schedulestore/schedules/${copy.targetId}?version=1`)).json;
      assert.equal(body.agentId, result.agentId);
      assert.equal(body.message, 'exported');

      assert.equal(
        (await api.post(`/administration/production/deploy/${result.agentId}?version=1&waitForCompletion=true`)).status,
        200,
      );
      now = start + MINUTE + 1000;
      await tick();
      const [run] = (await history(copy.targetId)).runs;
      assert.equal(run?.outcome, 'OK', JSON.stringify(run));
      const conversation = await api.get(`/agents/${run.conversationId}?returnDetailed=false`);
      assert.equal(conversation.json.agentId, result.agentId);
    });

    it('an edited schedule runs on its new timing from the edit on; a deleted one stops', async () => {
      now = start;
      const agentId = await echoAgent();
      const id = await createSchedule({ agentId, cron: '0 * * * *', message: 'hourly' });
      now = Date.parse('2026-03-02T08:30:00Z');
      const edited = await api.put(`/schedulestore/schedules/${id}?version=1`, {
        json: { agentId, cron: '45 8 * * *', message: 'at quarter to nine' },
      });
      assert.equal(edited.status, 200, edited.text);
      assert.equal((await history(id)).nextRunOn, Date.parse('2026-03-02T08:45:00Z'));
      now = Date.parse('2026-03-02T08:45:01Z');
      await tick();
      assert.equal((await history(id)).runs.length, 1);
      assert.equal((await api.delete(`/schedulestore/schedules/${id}?version=2`)).status, 200);
      now = Date.parse('2026-03-03T08:45:01Z');
      await tick();
      assert.equal((await api.get(`/schedulestore/schedules/${id}/runs`)).status, 404);
    });
  });
}
