import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { idFromLocation } from './support/agents.ts';
import { controlTask, turnGate } from './support/control-task.ts';
import { echoTask } from './support/echo-task.ts';
import { memberAgent, transcriptOf } from './support/groups.ts';
import { call, client } from './support/http.ts';
import { deployedOn, startInstances, type Instances } from './support/instances.ts';

/**
 * Group conversations with several instances on one PostgreSQL database: a discussion runs on one instance while
 * another serves its members' agents, a follow-up continues it on another, and every instance reads the same
 * transcript; a follow-up while one runs is refused.
 */
describe('group conversations on several instances', () => {
  let cluster: Instances | undefined;
  let instances: RunningServer[] = [];
  const agents: Record<string, string> = {};
  let groupId = '';

  before(async () => {
    cluster = await startInstances(3, {}, { extraTasks: [echoTask, controlTask] });
    instances = cluster.servers;
    const api = client(() => instances[0]!.url);
    agents.Ada = await memberAgent(api, 'Ada', { gated: true });
    agents.Bob = await memberAgent(api, 'Bob');
    agents.Mod = await memberAgent(api, 'Mod');
    for (const instance of instances)
      for (const agentId of Object.values(agents)) await deployedOn(instance.url, agentId);
    const created = await api.post('/groupstore/groups', {
      json: {
        members: [
          { agentId: agents.Ada, displayName: 'Ada' },
          { agentId: agents.Bob, displayName: 'Bob' },
        ],
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
      },
    });
    assert.equal(created.status, 201, created.text);
    groupId = idFromLocation(created.headers.get('location'));
  });
  after(() => cluster?.close());

  it('a discussion runs on one instance while another serves its members; a follow-up continues it elsewhere', async () => {
    const [first, second, third] = instances as [RunningServer, RunningServer, RunningServer];
    const gate = turnGate();
    const running = call(first.url, 'POST', `/groups/${groupId}/conversations`, {
      json: { input: 'Where do we host?', context: gate.context },
    });
    await gate.reached; // Ada's turn on the first instance is under way

    // Meanwhile the second instance serves the members' agents to anyone else.
    const elsewhere = await call(second.url, 'POST', `/agents/${agents.Bob}/start`, { json: { input: 'hello Bob' } });
    assert.equal(elsewhere.status, 201, elsewhere.text);
    assert.deepEqual(elsewhere.json.conversationOutputs.at(-1).output, ['Bob: hello Bob']);
    const listed = await call(third.url, 'GET', `/groups/${groupId}/conversations`);
    assert.deepEqual(
      listed.json.map((d: { state: string }) => d.state),
      ['RUNNING'],
      'the running discussion is visible everywhere',
    );
    const busy = await call(third.url, 'POST', `/groups/${groupId}/conversations/${listed.json[0].id}`, {
      json: { input: 'too early' },
    });
    assert.equal(busy.status, 409, busy.text);

    gate.release();
    const started = await running;
    assert.equal(started.status, 201, started.text);
    const discussion = started.json;
    assert.deepEqual(transcriptOf(discussion), [
      ['Round 1', 'Ada', 'OK'],
      ['Round 1', 'Bob', 'OK'],
      ['Synthesis', 'Moderator', 'OK'],
    ]);

    const followed = await call(second.url, 'POST', `/groups/${groupId}/conversations/${discussion.id}`, {
      json: { input: 'And the database?' },
    });
    assert.equal(followed.status, 200, followed.text);
    const read = await call(third.url, 'GET', `/groups/${groupId}/conversations/${discussion.id}`);
    assert.deepEqual(read.json, followed.json);
    assert.deepEqual(
      read.json.questions.map((q: { input: string }) => q.input),
      ['Where do we host?', 'And the database?'],
    );
    const adaConversation = read.json.participants.find(
      (p: { displayName: string }) => p.displayName === 'Ada',
    ).conversationId;
    const conversation = await call(third.url, 'GET', `/agents/${adaConversation}?returnCurrentStepOnly=false`);
    assert.deepEqual(
      conversation.json.conversationOutputs.map((step: { input?: string }) => step.input?.split('\n').at(-2) ?? ''),
      ['', 'Question: Where do we host?', 'Question: And the database?'],
      "one conversation of Ada's agent across both instances",
    );
  });
});
