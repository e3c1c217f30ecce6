import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { controlExtension, controlTask, turnGate } from './support/control-task.ts';
import { call, client } from './support/http.ts';
import { startInstances, type Instances } from './support/instances.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';
import { waitFor } from './support/process.ts';

/**
 * Retention (issue 19 item 3), black-box over the REST API with the server's clock moved forward: ENDED
 * conversations go after 1 day, idle ones and long-term properties after 3; conversations inside the limit and one
 * with a turn in flight survive; the sweeps are counted in /q/metrics and recorded in the audit ledger under
 * `retention` without personal data. Two instances on one PostgreSQL database: one sweep at a time, counted once.
 */

const DAY = 24 * 60 * 60 * 1000;
const RETENTION = {
  'svc.conversations.deleteEndedConversationsOnceOlderThanDays': 1,
  'svc.conversations.deleteIdleConversationsOnceOlderThanDays': 3,
  'svc.usermemories.deleteOlderThanDays': 3,
  'svc.retention.batch-size': 2,
} as const;

type Api = ReturnType<typeof client>;

/** A clock `days` ahead of real time, moved by the test. */
function movableClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, moveTo: (days: number) => (offset = days * DAY) };
}

async function endedConversation(api: Api, agentId: string): Promise<string> {
  const { conversationId } = await startConversation(api, agentId);
  const ended = await api.post(`/agents/${conversationId}/endConversation`);
  assert.equal(ended.status, 200, ended.text);
  return conversationId;
}

async function exists(api: Api, conversationId: string): Promise<boolean> {
  const answer = await api.get(`/conversationstore/conversations/${conversationId}`);
  assert.ok(answer.status === 200 || answer.status === 404, answer.text);
  return answer.status === 200;
}

/** The value of a sample in the Prometheus exposition (0 when absent). */
async function sample(api: Api, name: string): Promise<number> {
  const { text } = await api.get('/q/metrics');
  const escaped = name.replace(/[{}"=]/g, (c) => `\\${c}`);
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

for (const store of storeTypes) {
  describe(`retention (${store})`, () => {
    const clock = movableClock();
    let server: TestServer;
    const api = client(() => server.url);
    let agentId: string;
    before(async () => {
      server = await startTestServer(store, RETENTION, [controlTask], { clock: clock.now });
      agentId = await deployAgent(api, { extensions: [controlExtension] });
    });
    after(async () => {
      await server?.dispose();
    });

    it('is off by default: no sweep job', async () => {
      const plain = await startTestServer(store);
      try {
        assert.equal(plain.server.retention, undefined);
        assert.equal(
          await sample(
            client(() => plain.url),
            'svc_retention_runs_total{outcome="completed"}',
          ),
          0,
        );
      } finally {
        await plain.dispose();
      }
    });

    it('deletes ended conversations after N days and idle ones after M, sparing busy and recent ones', async () => {
      const ended: string[] = [];
      for (let i = 0; i < 5; i++) ended.push(await endedConversation(api, agentId));
      const idle = (await startConversation(api, agentId)).conversationId as string;
      const busy = (await startConversation(api, agentId)).conversationId as string;
      const remembering = (await startConversation(api, agentId)).conversationId as string;
      await sendMessage(api, remembering, 'remember', {
        context: { property: { type: 'object', value: { name: 'favourite', value: 'tea', scope: 'longTerm' } } },
      });

      // Two days later: the ended ones are past their limit (in pages of two), the others inside theirs.
      clock.moveTo(2);
      assert.equal(await server.server.retention!.runNow(), true);
      for (const id of ended) assert.equal(await exists(api, id), false, `ended ${id} deleted`);
      for (const id of [idle, busy, remembering]) assert.equal(await exists(api, id), true, `${id} kept`);
      assert.equal(await sample(api, 'svc_retention_deleted_total{kind="ended_conversations"}'), 5);

      // Four days later, with a turn of `busy` in flight: the idle ones and the long-term property go, `busy` stays.
      clock.moveTo(4);
      const gate = turnGate();
      const inFlight = api.post(`/agents/${busy}`, { json: { input: 'slow', context: gate.context } });
      await gate.reached;
      assert.equal(await server.server.retention!.runNow(), true);
      gate.release();
      const answer = await inFlight;
      assert.equal(answer.status, 200, answer.text);
      assert.equal(await exists(api, idle), false);
      assert.equal(await exists(api, remembering), false);
      const kept = await api.get(`/conversationstore/conversations/${busy}`);
      assert.equal(kept.status, 200, kept.text);
      assert.equal(kept.json.conversationSteps.length, 2, 'the turn in flight was stored whole');

      // Its turn made it recent again: a further sweep keeps it.
      assert.equal(await server.server.retention!.runNow(), true);
      assert.equal(await exists(api, busy), true);

      assert.equal(await sample(api, 'svc_retention_deleted_total{kind="idle_conversations"}'), 2);
      assert.equal(await sample(api, 'svc_retention_deleted_total{kind="long_term_properties"}'), 1);
      assert.equal(await sample(api, 'svc_retention_conversations_skipped_total'), 1);
      assert.equal(await sample(api, 'svc_retention_runs_total{outcome="completed"}'), 3);

      // The ledger: one entry per sweep that did something, counts and cutoffs only.
      const entries = await api.get('/auditstore/retention');
      assert.equal(entries.status, 200, entries.text);
      assert.deepEqual(
        entries.json.map((entry: any) => [entry.sequence, entry.taskType, entry.outcome]),
        [
          [1, 'svc.retention', 'ok'],
          [2, 'svc.retention', 'ok'],
        ],
      );
      assert.deepEqual(entries.json[0].output, {
        endedConversationsDeleted: 5,
        idleConversationsDeleted: 0,
        conversationsSkippedBusy: 0,
        longTermPropertiesDeleted: 0,
        userMemoriesDeleted: 0,
      });
      assert.deepEqual(entries.json[1].output, {
        endedConversationsDeleted: 0,
        idleConversationsDeleted: 2,
        conversationsSkippedBusy: 1,
        longTermPropertiesDeleted: 1,
        userMemoriesDeleted: 0,
      });
      assert.equal(entries.json[1].input.idleConversationsAfterDays, 3);
      assert.match(entries.json[1].input.idleCutoff, /^\d{4}-\d\d-\d\dT/);
      const text = JSON.stringify(entries.json);
      for (const id of [...ended, idle, busy, remembering, agentId])
        assert.ok(!text.includes(id), `${id} not in the ledger`);
      assert.equal(entries.json[1].userId, '');
    });
  });
}

describe('retention with two instances on one PostgreSQL database', () => {
  const clock = movableClock();
  let instances: Instances;
  let a: RunningServer;
  let b: RunningServer;
  before(async () => {
    instances = await startInstances(2, RETENTION, { clock: clock.now, extraTasks: [controlTask] });
    [a, b] = instances.servers as [RunningServer, RunningServer];
  });
  after(async () => {
    await instances?.close();
  });

  it('runs one sweep at a time, counts each deletion once and keeps a conversation whose turn runs elsewhere', async () => {
    const apiA = client(() => a.url);
    const apiB = client(() => b.url);
    const agentId = await deployAgent(apiA, { extensions: [controlExtension] });
    await waitFor(async () => {
      const { json } = await call(b.url, 'GET', `/administration/production/deploymentstatus/${agentId}?version=1`);
      return json?.status === 'READY' ? true : undefined;
    }, 'the deployment on the second instance');
    const ended: string[] = [];
    for (let i = 0; i < 4; i++) ended.push(await endedConversation(apiA, agentId));
    const talking = (await startConversation(apiB, agentId)).conversationId as string;

    // Four days later a turn of `talking` runs on B, holding its conversation lock, while A sweeps.
    clock.moveTo(4);
    const gate = turnGate();
    const inFlight = apiB.post(`/agents/${talking}`, { json: { input: 'slow', context: gate.context } });
    await gate.reached;
    const sweepOnA = a.retention!.runNow();
    // A deletes the ended ones, then waits for the lock of `talking`; meanwhile the job is A's alone.
    await waitFor(
      async () => ((await exists(apiA, ended.at(-1)!)) ? undefined : true),
      'the ended conversations deleted',
    );
    assert.equal(await b.retention!.runNow(), false, 'B skips: A runs the sweep');
    gate.release();
    assert.equal((await inFlight).status, 200);
    assert.equal(await sweepOnA, true);
    assert.equal(await exists(apiA, talking), true, 'the turn that ran meanwhile keeps its conversation');

    assert.equal(await sample(apiA, 'svc_retention_deleted_total{kind="ended_conversations"}'), 4);
    assert.equal(await sample(apiB, 'svc_retention_deleted_total{kind="ended_conversations"}'), 0);
    assert.equal(await sample(apiB, 'svc_retention_runs_total{outcome="completed"}'), 0);
    const entries = await apiB.get('/auditstore/retention');
    assert.equal(entries.json.length, 1);
    assert.equal(entries.json[0].output.endedConversationsDeleted, 4);
    assert.equal(entries.json[0].output.idleConversationsDeleted, 0);

    // B sweeps next: nothing left to do, and the ledger's chain goes on from A's entry.
    assert.equal(await b.retention!.runNow(), true);
    assert.equal(await sample(apiB, 'svc_retention_deleted_total{kind="ended_conversations"}'), 0);
  });
});
