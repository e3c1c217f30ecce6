import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { idFromLocation } from './support/agents.ts';
import { controlTask, turnGate } from './support/control-task.ts';
import { echoTask } from './support/echo-task.ts';
import { memberAgent, sseEvents, transcriptOf } from './support/groups.ts';
import { call } from './support/http.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Group conversations (issue 18): a group's members answer through their own pipelines (here the echo task says
 * `<name>: <the message it got>`), phase by phase in the group's style, and the moderator synthesises; the
 * transcript is stored, streamed as it comes, and continued by follow-up questions.
 */

for (const store of storeTypes) {
  describe(`group conversations (${store})`, () => {
    const block = serverOfBlock(store, {}, [echoTask, controlTask]);
    const { api } = block;
    const agents: Record<string, string> = {};
    const createGroup = async (body: Record<string, unknown>) => {
      const created = await api.post('/groupstore/groups', { json: body });
      assert.equal(created.status, 201, created.text);
      return idFromLocation(created.headers.get('location'));
    };
    const members = (...names: string[]) => names.map((name) => ({ agentId: agents[name]!, displayName: name }));

    before(async () => {
      for (const name of ['Ada', 'Bob', 'Cy', 'Mod']) agents[name] = await memberAgent(api, name);
      agents.Gated = await memberAgent(api, 'Gated', { gated: true });
      agents.Undeployed = await memberAgent(api, 'Undeployed', { deployed: false });
    });

    it('a round table: members answer in speaking order, each seeing the others, and the moderator synthesises; the transcript is stored', async () => {
      const groupId = await createGroup({
        name: 'Architecture panel',
        members: [
          { agentId: agents.Ada, displayName: 'Ada', speakingOrder: 2 },
          { agentId: agents.Bob, displayName: 'Bob', speakingOrder: 1 },
        ],
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
      });
      const started = await api.post(`/groups/${groupId}/conversations`, { json: { input: 'Monolith or services?' } });
      assert.equal(started.status, 201, started.text);
      const discussion = started.json;
      assert.equal(started.headers.get('location'), `/groups/${groupId}/conversations/${discussion.id}`);
      assert.equal(discussion.state, 'DONE');
      assert.deepEqual(transcriptOf(discussion), [
        ['Round 1', 'Bob', 'OK'],
        ['Round 1', 'Ada', 'OK'],
        ['Synthesis', 'Moderator', 'OK'],
      ]);
      const [bob, ada, moderator] = discussion.contributions;
      assert.match(bob.text, /^Bob: You are Bob in a group discussion \(Round 1\)\.\nQuestion: Monolith or services\?/);
      assert.doesNotMatch(bob.text, /What was said/);
      assert.match(ada.text, /What was said:\n- Bob: Bob: You are Bob/, 'Ada hears Bob');
      assert.match(moderator.text, /^Mod: .*synthesise/s);
      assert.match(moderator.text, /- Bob: Bob: /);
      assert.match(moderator.text, /- Ada: Ada: /);
      assert.equal(discussion.questions[0].synthesis, moderator.text);
      assert.equal(moderator.speaker.agentId, agents.Mod);

      // Each member answered through an ordinary conversation of its agent.
      const conversation = await api.get(`/agents/${bob.conversationId}?returnCurrentStepOnly=false`);
      assert.equal(conversation.status, 200, conversation.text);
      assert.equal(conversation.json.agentId, agents.Bob);

      const read = await api.get(`/groups/${groupId}/conversations/${discussion.id}`);
      assert.deepEqual(read.json, discussion);
      const listed = await api.get(`/groups/${groupId}/conversations`);
      assert.deepEqual(
        listed.json.map((d: { id: string; questions: unknown }) => [d.id, d.questions]),
        [[discussion.id, discussion.questions]],
      );
    });

    it('the streaming variant sends each phase and contribution as it comes, then the discussion', async () => {
      const groupId = await createGroup({
        members: members('Ada', 'Bob'),
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
      });
      const answer = await call(block.server.url, 'POST', `/groups/${groupId}/conversations/stream`, {
        json: { input: 'Tabs or spaces?' },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.headers.get('content-type') ?? '', /text\/event-stream/);
      const events = sseEvents(answer.text);
      assert.deepEqual(
        events.map((e) =>
          e.event === 'contribution'
            ? `${e.event}:${e.data.speaker.displayName}`
            : `${e.event}:${e.data.name ?? e.data.state}`,
        ),
        [
          'phase:Round 1',
          'contribution:Ada',
          'contribution:Bob',
          'phase:Synthesis',
          'contribution:Moderator',
          'done:DONE',
        ],
      );
      const done = events.at(-1)!.data;
      assert.deepEqual((await api.get(`/groups/${groupId}/conversations/${done.id}`)).json, done);
    });

    it('a follow-up question continues the same conversations and knows the earlier conclusion', async () => {
      const groupId = await createGroup({
        members: members('Ada', 'Bob'),
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
      });
      const first = (await api.post(`/groups/${groupId}/conversations`, { json: { input: 'First question?' } })).json;
      const followed = await api.post(`/groups/${groupId}/conversations/${first.id}`, {
        json: { input: 'And the second?' },
      });
      assert.equal(followed.status, 200, followed.text);
      const discussion = followed.json;
      assert.deepEqual(
        discussion.questions.map((q: { input: string }) => q.input),
        ['First question?', 'And the second?'],
      );
      assert.ok(discussion.questions[1].synthesis);
      const second = discussion.contributions.filter((c: { question: number }) => c.question === 1);
      assert.equal(second.length, 3);
      assert.match(second[0].text, /Earlier questions:\n- First question\? \(concluded: Mod: /);
      for (const c of second)
        assert.equal(
          c.conversationId,
          first.contributions.find(
            (f: { speaker: { displayName: string } }) => f.speaker.displayName === c.speaker.displayName,
          ).conversationId,
          'the same conversation',
        );
      const conversation = await api.get(`/agents/${second[0].conversationId}?returnCurrentStepOnly=false`);
      assert.equal(conversation.json.conversationOutputs.length, 3, 'start, first question, follow-up');
    });

    it('members that fail or time out are reported, and the discussion goes on without them', async () => {
      const gate = turnGate();
      const groupId = await createGroup({
        members: members('Ada', 'Undeployed', 'Gated'),
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
        maxRounds: 2,
        protocol: { agentTimeoutSeconds: 1 },
      });
      try {
        const answer = await api.post(`/groups/${groupId}/conversations`, {
          json: { input: 'Who is there?', context: gate.context },
        });
        assert.equal(answer.status, 201, answer.text);
        const discussion = answer.json;
        assert.deepEqual(transcriptOf(discussion), [
          ['Round 1', 'Ada', 'OK'],
          ['Round 1', 'Undeployed', 'FAILED'],
          ['Round 1', 'Gated', 'TIMEOUT'],
          ['Round 2', 'Ada', 'OK'],
          ['Synthesis', 'Moderator', 'OK'],
        ]);
        assert.match(discussion.contributions[1].error, /not deployed/);
        assert.match(discussion.contributions[2].error, /No answer within 1 s/);
        assert.doesNotMatch(discussion.contributions[4].text, /Undeployed:|Gated:/);
        assert.ok(discussion.questions[0].synthesis);
      } finally {
        gate.release();
      }
    });

    it('every style unfolds into its phases', async () => {
      const roles = (style: string, extra: Record<string, unknown> = {}) => ({
        moderatorAgentId: agents.Mod,
        style,
        ...extra,
      });
      const cases: [Record<string, unknown>, string[][]][] = [
        [
          roles('PEER_REVIEW', { members: members('Ada', 'Bob') }),
          [
            ['Opinions', 'Ada', 'OK'],
            ['Opinions', 'Bob', 'OK'],
            ['Critique 1', 'Ada on Bob', 'OK'],
            ['Critique 1', 'Bob on Ada', 'OK'],
            ['Revision 1', 'Ada', 'OK'],
            ['Revision 1', 'Bob', 'OK'],
            ['Synthesis', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('DEVIL_ADVOCATE', {
            members: [...members('Ada', 'Bob'), { agentId: agents.Cy, displayName: 'Cy', role: 'DEVIL_ADVOCATE' }],
          }),
          [
            ['Opinions', 'Ada', 'OK'],
            ['Opinions', 'Bob', 'OK'],
            ['Challenge 1', 'Cy', 'OK'],
            ['Defense 1', 'Ada', 'OK'],
            ['Defense 1', 'Bob', 'OK'],
            ['Synthesis', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('DELPHI', { members: members('Ada', 'Bob') }),
          [
            ['Round 1', 'Ada', 'OK'],
            ['Round 1', 'Bob', 'OK'],
            ['Round 2', 'Ada', 'OK'],
            ['Round 2', 'Bob', 'OK'],
            ['Convergence', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('DEBATE', {
            members: [
              { agentId: agents.Ada, displayName: 'Ada', role: 'PRO' },
              { agentId: agents.Bob, displayName: 'Bob', role: 'CON' },
            ],
          }),
          [
            ['Pro arguments', 'Ada', 'OK'],
            ['Con arguments', 'Bob', 'OK'],
            ['Pro rebuttal 1', 'Ada', 'OK'],
            ['Con rebuttal 1', 'Bob', 'OK'],
            ['Judgement', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('TASK_FORCE', { members: members('Ada', 'Bob'), maxRounds: 2 }),
          [
            ['Contributions 1', 'Ada', 'OK'],
            ['Contributions 1', 'Bob', 'OK'],
            ['Contributions 2', 'Ada', 'OK'],
            ['Contributions 2', 'Bob', 'OK'],
            ['Integration', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('NEGOTIATION', { members: members('Ada', 'Bob') }),
          [
            ['Opening positions', 'Ada', 'OK'],
            ['Opening positions', 'Bob', 'OK'],
            ['Counter-proposals 1', 'Ada', 'OK'],
            ['Counter-proposals 1', 'Bob', 'OK'],
            ['Agreement', 'Moderator', 'OK'],
          ],
        ],
        [
          roles('CUSTOM', {
            members: members('Ada', 'Bob'),
            phases: [
              {
                name: 'Ideas',
                type: 'OPINION',
                turnOrder: 'PARALLEL',
                contextScope: 'NONE',
                instruction: 'Brainstorm.',
              },
              { name: 'Pick', type: 'SYNTHESIS', participants: 'MODERATOR', contextScope: 'LAST_PHASE' },
            ],
          }),
          [
            ['Ideas', 'Ada', 'OK'],
            ['Ideas', 'Bob', 'OK'],
            ['Pick', 'Moderator', 'OK'],
          ],
        ],
      ];
      for (const [group, expected] of cases) {
        const groupId = await createGroup(group);
        const answer = await api.post(`/groups/${groupId}/conversations`, { json: { input: 'Go?' } });
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(transcriptOf(answer.json), expected, String(group.style));
        const contributions = answer.json.contributions;
        if (group.style === 'DELPHI') {
          const secondRound = contributions.find((c: { phase: string }) => c.phase === 'Round 2');
          assert.match(secondRound.text, /- Participant 1: /);
          assert.doesNotMatch(secondRound.text.split('What was said:')[1], /- (Ada|Bob):/, 'anonymous');
        }
        if (group.style === 'PEER_REVIEW') {
          const revision = contributions.find((c: { phase: string }) => c.phase === 'Revision 1');
          assert.match(
            revision.text,
            /What was said:\n- Bob: Bob: .*Critique 1/s,
            "Ada's revision sees Bob's critique of her",
          );
        }
        if (group.style === 'CUSTOM') assert.match(contributions[0].text, /Brainstorm\.$/);
      }
    });

    it('bad groups and questions answer 400 naming the field; unknown groups and discussions 404', async () => {
      const refused = async (body: Record<string, unknown>, pattern: RegExp) => {
        const answer = await api.post('/groupstore/groups', { json: body });
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
        assert.match(answer.json.detail, pattern);
      };
      const base = { members: members('Ada', 'Bob'), moderatorAgentId: agents.Mod };
      await refused({ ...base, style: 'DEBATE' }, /role PRO and one with role CON/);
      await refused({ ...base, style: 'DEVIL_ADVOCATE' }, /role DEVIL_ADVOCATE/);
      await refused({ ...base, style: 'CUSTOM' }, /\$\.phases/);
      await refused({ ...base, style: 'CUSTOM', phases: [{ name: 'x', type: 'OPINION' }], maxRounds: 2 }, /maxRounds/);
      await refused(
        { ...base, style: 'ROUND_TABLE', phases: [{ name: 'x', type: 'OPINION' }] },
        /phases are read only/,
      );
      await refused({ ...base, style: 'SHOUTING' }, /style/);
      await refused({ ...base, style: 'ROUND_TABLE', maxRounds: 0 }, /maxRounds/);
      await refused({ ...base, style: 'ROUND_TABLE', members: [] }, /members/);
      await refused({ ...base, style: 'ROUND_TABLE', moderatorAgentId: 'nope' }, /moderatorAgentId/);
      await refused({ ...base, style: 'ROUND_TABLE', protocol: { onAgentFailure: 'ABORT' } }, /onAgentFailure/);
      await refused({ ...base, style: 'ROUND_TABLE', environment: 'staging' }, /environment/);

      const groupId = await createGroup({ ...base, style: 'ROUND_TABLE' });
      const noInput = await api.post(`/groups/${groupId}/conversations`, { json: {} });
      assert.equal(noInput.status, 400);
      const extra = await api.post(`/groups/${groupId}/conversations`, { json: { input: 'x', mood: 'happy' } });
      assert.equal(extra.status, 400);
      assert.match(extra.json.detail, /mood/);
      const badContext = await api.post(`/groups/${groupId}/conversations`, {
        json: { input: 'x', context: { a: { type: 'number', value: 1 } } },
      });
      assert.equal(badContext.status, 400, badContext.text);
      assert.equal(
        (await api.post('/groups/0123456789abcdef01234567/conversations', { json: { input: 'x' } })).status,
        404,
      );
      assert.equal((await api.get(`/groups/${groupId}/conversations/0123456789abcdef01234567`)).status, 404);
      assert.equal(
        (await api.post(`/groups/${groupId}/conversations/0123456789abcdef01234567`, { json: { input: 'x' } })).status,
        404,
      );
      assert.equal((await api.delete(`/groups/${groupId}/conversations/0123456789abcdef01234567`)).status, 404);
    });

    it('a transcript can be deleted', async () => {
      const groupId = await createGroup({
        members: members('Ada'),
        moderatorAgentId: agents.Mod,
        style: 'ROUND_TABLE',
      });
      const { id } = (await api.post(`/groups/${groupId}/conversations`, { json: { input: 'x' } })).json;
      assert.equal((await api.delete(`/groups/${groupId}/conversations/${id}`)).status, 200);
      assert.equal((await api.get(`/groups/${groupId}/conversations/${id}`)).status, 404);
    });
  });
}
