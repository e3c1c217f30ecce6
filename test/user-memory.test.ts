import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAgent, createResource, deploy, onEveryMessage, sendMessage, welcomeOutputs } from './support/agents.ts';
import { startFakeOpenAi } from './support/fake-llm/index.ts';
import { loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';
import type { client } from './support/http.ts';

/**
 * Persistent user memory through the REST API, on both stores: the memory tools driven by a loopback
 * OpenAI-compatible fake (per-agent visibility, guardrails), the `/usermemorystore/memories` routes, the whole
 * user's data (`/admin/gdpr/{userId}`), what agent and LLM configurations may say, and the retention sweep.
 */

type Api = ReturnType<typeof client>;

const MEMORY_CONFIG = {
  maxRecallEntries: 20,
  guardrails: { maxWritesPerTurn: 2, allowedVisibilities: ['self', 'global'] },
};

/** An agent whose every message goes to an LLM task with the memory tools; answers its id. */
async function memoryAgent(api: Api, fakeUrl: string, agentFields: Record<string, unknown> = {}): Promise<string> {
  const llmUri = await createResource(api, '/llmstore/llms', {
    tasks: [
      openAiTask(
        { url: fakeUrl } as never,
        { enableBuiltInTools: true, builtInToolsWhitelist: ['usermemory'] },
        { systemMessage: 'You remember things.' },
      ),
    ],
  });
  const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('chat'));
  const agentId = await createAgent(api, {
    outputSet: welcomeOutputs,
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
    agent: { enableMemoryTools: true, userMemoryConfig: MEMORY_CONFIG, ...agentFields },
  });
  await deploy(api, agentId);
  return agentId;
}

async function start(api: Api, agentId: string, userId: string): Promise<string> {
  const started = await api.post(`/agents/${agentId}/start?userId=${userId}`, { json: {} });
  assert.equal(started.status, 201, started.text);
  return started.json.conversationId;
}

/** The tool results the model got back in a request (OpenAI chat: `tool` messages). */
function toolResults(request: { body: any }): string[] {
  return request.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => String(m.content));
}

for (const store of storeTypes) {
  describe(`persistent user memory on ${store}`, () => {
    const { api } = serverOfBlock(store);
    const loopback = loopbackOfBlock({ fake: startFakeOpenAi });
    let agentA: string;
    let agentB: string;
    let conversationA: string;

    it('the model remembers facts with the memory tools; REST lists them with their source agent and conversation', async () => {
      agentA = await memoryAgent(api, loopback.fake.url);
      agentB = await memoryAgent(api, loopback.fake.url);
      conversationA = await start(api, agentA, 'alice');
      loopback.fake.reset();
      loopback.fake.reply(
        {
          toolCalls: [
            { name: 'rememberFact', args: { key: 'favorite_color', value: 'blue', category: 'preference' } },
            { name: 'rememberFact', args: { key: 'language', value: 'German', visibility: 'global' } },
          ],
        },
        { text: 'Noted.' },
      );
      const answer = await sendMessage(api, conversationA, 'I like blue and speak German.');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Noted.']);
      const offered = loopback.fake.requests[0]!.body.tools.map((tool: any) => tool.function.name).sort();
      assert.deepEqual(offered, ['forgetFact', 'recallMemories', 'rememberFact', 'searchMemory']);
      assert.deepEqual(toolResults(loopback.fake.requests[1]!), [
        'Remembered: favorite_color = blue [preference, self]',
        'Remembered: language = German [fact, global]',
      ]);

      const listed = await api.get('/usermemorystore/memories/alice');
      assert.equal(listed.status, 200);
      const byKey = Object.fromEntries(listed.json.map((entry: any) => [entry.key, entry]));
      assert.deepEqual(Object.keys(byKey).sort(), ['favorite_color', 'language']);
      assert.equal(byKey.favorite_color.visibility, 'self');
      assert.equal(byKey.favorite_color.sourceAgentId, agentA);
      assert.equal(byKey.favorite_color.sourceConversationId, conversationA);
      assert.equal(byKey.language.visibility, 'global');
      assert.equal(byKey.favorite_color.value, 'blue');
    });

    it('another agent of the same user recalls only the global fact, and may not forget it', async () => {
      const conversationB = await start(api, agentB, 'alice');
      loopback.fake.reset();
      loopback.fake.reply(
        { toolCalls: [{ name: 'recallMemories', args: {} }] },
        { toolCalls: [{ name: 'forgetFact', args: { key: 'language' } }] },
        { text: 'You speak German.' },
      );
      await sendMessage(api, conversationB, 'What do you know about me?');
      const [recalled] = toolResults(loopback.fake.requests[1]!);
      assert.equal(recalled, '• language = German [fact, global]');
      assert.match(toolResults(loopback.fake.requests[2]!).at(-1)!, /Nothing this agent may forget/);
      assert.equal((await api.get('/usermemorystore/memories/alice/count')).json, 2);

      // The writing agent sees both, and its recall counted as an access.
      loopback.fake.reset();
      loopback.fake.reply(
        { toolCalls: [{ name: 'searchMemory', args: { query: 'favorite color' } }] },
        { text: 'Blue.' },
      );
      await sendMessage(api, conversationA, 'My colour?');
      assert.deepEqual(toolResults(loopback.fake.requests[1]!), ['• favorite_color = blue [preference, self]']);
      const entry = (await api.get('/usermemorystore/memories/alice?key=favorite_color')).json[0];
      assert.equal(entry.accessCount, 1);
      const visible = await api.get(`/usermemorystore/memories/alice/visible?agentId=${agentB}`);
      assert.deepEqual(
        visible.json.map((e: any) => e.key),
        ['language'],
      );
    });

    it('guardrails: a visibility not allowed, and writes past maxWritesPerTurn, are refused to the model', async () => {
      loopback.fake.reset();
      loopback.fake.reply(
        {
          toolCalls: [
            { name: 'rememberFact', args: { key: 'team', value: 'red', visibility: 'group' } },
            { name: 'rememberFact', args: { key: 'city', value: 'Vienna' } },
            { name: 'rememberFact', args: { key: 'pet', value: 'cat' } },
          ],
        },
        // The calls of one step run concurrently (which of them is refused would be up to chance): the third write
        // comes in the next step.
        { toolCalls: [{ name: 'rememberFact', args: { key: 'food', value: 'pasta' } }] },
        { text: 'Done.' },
      );
      await sendMessage(api, conversationA, 'Remember a lot.');
      const results = toolResults(loopback.fake.requests[2]!);
      assert.match(results[0]!, /^Error: The visibility 'group' is not allowed/);
      assert.match(results[1]!, /^Remembered: city/);
      assert.match(results[2]!, /^Remembered: pet/);
      assert.match(results[3]!, /^Error: At most 2 memory writes per turn/);
      const keys = (await api.get('/usermemorystore/memories/alice')).json.map((e: any) => e.key).sort();
      assert.deepEqual(keys, ['city', 'favorite_color', 'language', 'pet']);
    });

    it('REST: filters, one entry, export, delete one, upsert with its rules, erase all', async () => {
      const preferences = await api.get('/usermemorystore/memories/alice?category=preference');
      assert.deepEqual(
        preferences.json.map((e: any) => e.key),
        ['favorite_color'],
      );
      assert.deepEqual(
        (await api.get('/usermemorystore/memories/alice/search?q=vienna')).json.map((e: any) => e.key),
        ['city'],
      );
      assert.deepEqual(
        (await api.get('/usermemorystore/memories/alice/category/fact')).json.map((e: any) => e.key).sort(),
        ['city', 'language', 'pet'],
      );
      const pet = (await api.get('/usermemorystore/memories/alice/key/pet')).json[0];
      const one = await api.get(`/usermemorystore/memories/alice/entries/${pet.id}`);
      assert.equal(one.status, 200);
      assert.equal(one.json.value, 'cat');
      assert.equal((await api.get(`/usermemorystore/memories/bob/entries/${pet.id}`)).status, 404);

      const exported = await api.get('/usermemorystore/memories/alice/export');
      assert.equal(exported.status, 200);
      assert.match(exported.headers.get('content-disposition') ?? '', /attachment; filename="memories-alice.json"/);
      assert.equal(exported.json.memories.length, 4);

      assert.equal((await api.delete(`/usermemorystore/memories/alice/entries/${pet.id}`)).status, 200);
      assert.equal((await api.delete(`/usermemorystore/memories/alice/entries/${pet.id}`)).status, 404);

      const put = await api.put('/usermemorystore/memories', {
        json: { userId: 'alice', key: 'profile', value: { age: 41 }, visibility: 'global', category: 'context' },
      });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.json.value, { age: 41 });
      const again = await api.put('/usermemorystore/memories', {
        json: { userId: 'alice', key: 'profile', value: { age: 42 }, visibility: 'global', category: 'context' },
      });
      assert.equal(again.json.id, put.json.id, 'same user, key and owner: the entry is replaced');
      assert.equal(again.json.createdAt, put.json.createdAt);

      for (const [body, pattern] of [
        [{ userId: 'alice', key: 'x', value: 1, visibility: 'group', sourceAgentId: agentA }, /groupIds/],
        [{ userId: 'alice', key: 'x', value: 1, visibility: 'self' }, /sourceAgentId/],
        [{ userId: 'alice', key: 'x', value: 1, visibility: 'everyone' }, /visibility/],
        [{ userId: 'alice', key: 'x', value: 1, visibility: 'global', category: 'secret' }, /category/],
        [{ userId: 'alice', key: 'x', value: 1, visibility: 'global', extra: true }, /extra/],
        [{ userId: 'alice', key: 'x', visibility: 'global' }, /value/],
        [{ userId: 'alice', key: 'x'.repeat(256), value: 1, visibility: 'global' }, /key/],
        [{ userId: 'alice', key: 'x', value: 'y'.repeat(70_000), visibility: 'global' }, /value/],
      ] as const) {
        const refused = await api.put('/usermemorystore/memories', { json: body });
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
        assert.match(refused.json.detail, pattern);
      }
      assert.equal((await api.get('/usermemorystore/memories/alice?category=secret')).status, 400);
      assert.deepEqual(
        (await api.get('/usermemorystore/memories/alice/visible')).json.map((e: any) => e.visibility),
        ['global', 'global'],
        'without an agent: what every agent sees',
      );
      assert.equal((await api.get('/usermemorystore/memories/alice/visible?limit=0')).status, 400);
      assert.equal((await api.get('/usermemorystore/memories/alice/count')).json, 4);

      const users = await api.get('/usermemorystore/memories');
      assert.deepEqual(
        users.json.map((u: any) => [u.userId, u.entries]),
        [['alice', 4]],
      );
      await api.put('/usermemorystore/memories', {
        json: { userId: 'carol', key: 'k', value: 'v', visibility: 'global' },
      });
      const erased = await api.delete('/usermemorystore/memories/carol');
      assert.deepEqual(erased.json, { deleted: 1 });
      assert.deepEqual((await api.get('/usermemorystore/memories/carol')).json, []);
    });

    it("GDPR: one call exports a user's memories, long-term properties and conversations; one erases them", async () => {
      await sendMessage(api, conversationA, 'hello', { context: { lang: { type: 'string', value: 'de' } } }).catch(
        () => undefined,
      );
      const exported = await api.get('/admin/gdpr/alice');
      assert.equal(exported.status, 200, exported.text);
      assert.match(exported.headers.get('content-disposition') ?? '', /user-data-alice\.json/);
      assert.equal(exported.json.userId, 'alice');
      assert.equal(exported.json.memories.length, 4);
      assert.equal(exported.json.longTermProperties.lang, 'de');
      const ids = exported.json.conversations.map((c: any) => c.conversationId).sort();
      assert.equal(ids.length, 2);
      assert.ok(ids.includes(conversationA));
      assert.ok(exported.json.conversations.every((c: any) => c.conversationSteps.length >= 2));

      const erased = await api.delete('/admin/gdpr/alice');
      assert.deepEqual(erased.json, { userId: 'alice', memories: 4, longTermProperties: 1, conversations: 2 });
      assert.equal((await api.get(`/agents/${conversationA}`)).status, 404);
      const after = (await api.get('/admin/gdpr/alice')).json;
      assert.deepEqual([after.memories, after.longTermProperties, after.conversations], [[], {}, []]);
    });

    it('agent and LLM configurations: what is refused at write time and at deployment', async () => {
      const agentBody = (fields: Record<string, unknown>) => ({ packages: [], ...fields });
      for (const [fields, pattern] of [
        [{ userMemoryConfig: { recallOrder: 'random' } }, /recallOrder/],
        [{ userMemoryConfig: { unknownField: 1 } }, /unknownField/],
        [{ userMemoryConfig: { guardrails: { allowedVisibilities: ['everyone'] } } }, /allowedVisibilities/],
        [{ userMemoryConfig: { dream: { enabled: true } } }, /Dream memory consolidation/],
        [{ enableMemoryTools: 'yes please' }, /enableMemoryTools/],
      ] as const) {
        const refused = await api.post('/agentstore/agents', { json: agentBody(fields) });
        assert.equal(refused.status, 400, JSON.stringify(fields));
        assert.match(refused.json.detail, pattern);
      }
      const upstreamDefaults = await api.post('/agentstore/agents', {
        json: agentBody({
          enableMemoryTools: 'false',
          userMemoryConfig: { autoRecallCategories: ['preference', 'fact'], dream: { enabled: false } },
        }),
      });
      assert.equal(upstreamDefaults.status, 201, upstreamDefaults.text);
      const stored = await api.get(`${new URL(upstreamDefaults.headers.get('location')!).pathname}?version=1`);
      assert.deepEqual(stored.json.userMemoryConfig, {}, 'the original defaults that ask for nothing are dropped');

      // The whitelist names the memory tools, but the agent does not enable them: the deployment says why.
      const llmUri = await createResource(api, '/llmstore/llms', {
        tasks: [openAiTask(loopback.fake, { enableBuiltInTools: true, builtInToolsWhitelist: ['usermemory'] })],
      });
      const agentId = await createAgent(api, { extensions: [{ type: 'svc://ai.svc.llm', config: { uri: llmUri } }] });
      const failed = await api.post(`/administration/production/deploy/${agentId}?version=1&waitForCompletion=true`);
      assert.equal(failed.json.status, 'ERROR');
      assert.match(failed.json.error, /names 'usermemory', but the agent does not set enableMemoryTools: true/);
      const unknownTool = await api.post('/llmstore/llms', {
        json: {
          tasks: [openAiTask(loopback.fake, { enableBuiltInTools: true, builtInToolsWhitelist: ['usermemories'] })],
        },
      });
      assert.equal(unknownTool.status, 400);
      assert.match(unknownTool.json.detail, /usermemory/);
    });
  });

  describe(`user-memory retention on ${store}`, () => {
    let now = Date.now();
    const block = serverOfBlock(store, { 'svc.usermemories.deleteOlderThanDays': 30 }, [], { clock: () => now });
    const { api } = block;

    it('removes memory entries and long-term properties last written more than deleteOlderThanDays ago', async () => {
      const write = (key: string) =>
        api.put('/usermemorystore/memories', { json: { userId: 'dora', key, value: key, visibility: 'global' } });
      assert.equal((await write('old')).status, 200);
      const agentId = await createAgent(api, { outputSet: welcomeOutputs });
      await deploy(api, agentId);
      const started = await api.post(`/agents/${agentId}/start?userId=dora`, { json: {} });
      assert.equal(started.status, 201, started.text);
      await sendMessage(api, started.json.conversationId, 'bonjour', {
        context: { lang: { type: 'string', value: 'fr' } },
      });
      assert.equal((await api.get('/admin/gdpr/dora')).json.longTermProperties.lang, 'fr');

      now += 31 * 86_400_000;
      assert.equal((await write('fresh')).status, 200);
      assert.equal(await block.server.server.retention!.runNow(), true);
      const left = (await api.get('/admin/gdpr/dora')).json;
      assert.deepEqual(
        left.memories.map((e: any) => e.key),
        ['fresh'],
      );
      assert.deepEqual(left.longTermProperties, {});
    });
  });
}
