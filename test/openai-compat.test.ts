import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { sseEvents } from '../web/src/lib/sse.ts';
import {
  createAgent,
  deploy,
  deployLlmAgent,
  deployRuleAgent,
  publishAgent,
  welcomeOutputs,
} from './support/agents.ts';
import type { FakeProvider } from './support/fake-llm/fake-server.ts';
import { startFakeOpenAi } from './support/fake-llm/openai.ts';
import { call, client } from './support/http.ts';
import {
  SERVICE_AUDIENCE,
  startIdentityProvider,
  TEST_USERS,
  type TestIdentityProvider,
  type TestUserKey,
} from './support/oidc.ts';
import { serverOfBlock, startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * The OpenAI-compatible API through the official `openai` client: models, chat completions with and without
 * streaming, conversations found again by id and by history without duplicated turns, the user mapping, API keys
 * (shown once, stored hashed, scoped to agents, revocable), errors in OpenAI's shape; and the requests an Open
 * WebUI-style client sends, made by hand.
 */

const dictionary = {
  words: [
    { word: 'hello', expressions: 'greeting(hello)' },
    { word: 'weather', expressions: 'weather(request)' },
  ],
};
const rules = {
  behaviorGroups: [
    {
      name: 'G',
      behaviorRules: [
        {
          name: 'Greet',
          actions: ['greet'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
        },
        {
          name: 'Weather',
          actions: ['weather'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'weather(*)' } }],
        },
      ],
    },
  ],
};
const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
const outputs = {
  outputSet: [
    { action: 'CONVERSATION_START', timesOccurred: 0, outputs: [text('Welcome!')] },
    { action: 'greet', timesOccurred: 0, outputs: [text('Hi there!'), text('How can I help?')] },
    { action: 'weather', timesOccurred: 0, outputs: [text('It is sunny in {userInfo.userId} land.')] },
  ],
};

for (const storeType of storeTypes) {
  describe(`OpenAI-compatible API on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let ruleAgent: string;
    let llmAgent: string;
    let fake: FakeProvider;
    let openai: OpenAI;

    before(async () => {
      fake = await startFakeOpenAi();
      ruleAgent = await deployRuleAgent(api, { dictionary, rules, outputs });
      await deploy(api, ruleAgent, 1, 'test');
      llmAgent = await deployLlmAgent(api, {
        tasks: [
          {
            id: 'chat',
            type: 'openai',
            actions: ['chat'],
            retry: { maxAttempts: 1 },
            parameters: {
              apiKey: 'sk-provider',
              baseUrl: `${fake.url}/v1`,
              modelName: 'gpt-4o-mini',
              systemMessage: 'You help. {context.system}',
              addToOutput: 'true',
            },
          },
        ],
      });
      openai = new OpenAI({
        apiKey: 'unused-while-authentication-is-off',
        baseURL: `${block.server.url}/v1`,
        maxRetries: 0,
      });
    });
    after(() => fake.close());

    const stepsOf = async (conversationId: string) =>
      (await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`)).json.conversationOutputs.length;

    it('lists the deployed agents as models (test deployments as <agentId>@test)', async () => {
      const ids = [];
      for await (const model of openai.models.list()) ids.push(model.id);
      assert.ok(ids.includes(ruleAgent), ids.join());
      assert.ok(ids.includes(`${ruleAgent}@test`), ids.join());
      assert.ok(ids.includes(llmAgent));
      const one = await openai.models.retrieve(ruleAgent);
      assert.equal(one.object, 'model');
    });

    it('answers a chat completion; the next request with the whole history continues the same conversation, a retry makes no second turn', async () => {
      const { data: first, response } = await openai.chat.completions
        .create({ model: ruleAgent, messages: [{ role: 'user', content: 'hello' }], user: 'ada' })
        .withResponse();
      assert.equal(first.object, 'chat.completion');
      assert.equal(first.choices[0]!.message.content, 'Hi there!\n\nHow can I help?');
      assert.equal(first.choices[0]!.finish_reason, 'stop');
      const conversationId = response.headers.get('x-conversation-id')!;
      assert.equal((first as unknown as { conversation_id: string }).conversation_id, conversationId);
      const conversation = (await api.get(`/agents/${conversationId}`)).json;
      assert.equal(conversation.userId, 'ada', 'user maps to userId');

      const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'weather' },
      ];
      const second = await openai.chat.completions.create({ model: ruleAgent, messages: history, user: 'ada' });
      assert.equal(second.choices[0]!.message.content, 'It is sunny in ada land.');
      assert.equal((second as unknown as { conversation_id: string }).conversation_id, conversationId);
      assert.equal(await stepsOf(conversationId), 3, 'start, hello, weather');

      const retried = await openai.chat.completions.create({ model: ruleAgent, messages: history, user: 'ada' });
      assert.equal(retried.choices[0]!.message.content, 'It is sunny in ada land.');
      assert.equal(await stepsOf(conversationId), 3, 'the retry made no second turn');

      const otherUser = await openai.chat.completions.create({ model: ruleAgent, messages: history, user: 'bob' });
      assert.notEqual((otherUser as unknown as { conversation_id: string }).conversation_id, conversationId);

      const byId = await openai.chat.completions.create(
        { model: ruleAgent, messages: [{ role: 'user', content: 'hello' }], user: 'ada' },
        { headers: { 'X-Conversation-Id': conversationId } },
      );
      assert.equal((byId as unknown as { conversation_id: string }).conversation_id, conversationId);
      assert.equal(await stepsOf(conversationId), 4);
    });

    it('streams an LLM agent token by token, with usage and [DONE]; the system message reaches the agent as context', async () => {
      fake.reset();
      fake.reply({ text: 'It is forty two.', usage: { input: 20, output: 5 } });
      const stream = await openai.chat.completions.create({
        model: llmAgent,
        messages: [
          { role: 'system', content: 'Answer in numbers.' },
          { role: 'user', content: 'What is six times seven?' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      });
      const deltas: string[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'chat.completion.chunk');
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (choice?.delta.content) deltas.push(choice.delta.content);
        if (choice?.finish_reason) finish = choice.finish_reason;
      }
      assert.ok(deltas.length > 1, 'more than one delta: the tokens were streamed');
      assert.equal(deltas.join(''), 'It is forty two.');
      assert.equal(finish, 'stop');
      assert.deepEqual(usage, { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
      assert.equal(fake.requests[0]!.body.messages[0].content, 'You help. Answer in numbers.');

      fake.reply({ text: 'Fine.', usage: { input: 3, output: 1 } });
      const plain = await openai.chat.completions.create({
        model: llmAgent,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      assert.equal(plain.choices[0]!.message.content, 'Fine.');
      assert.deepEqual(plain.usage, { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    });

    it('a rule-based agent streams its whole answer in one delta', async () => {
      const stream = await openai.chat.completions.create({
        model: `${ruleAgent}@test`,
        messages: [{ role: 'user', content: 'hello' }],
        stream: true,
      });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      assert.equal(content, 'Hi there!\n\nHow can I help?');
    });

    it("answers errors in OpenAI's shape: unknown model, parameters it does not take, messages not ending with the user's, a failing turn", async () => {
      await assert.rejects(
        openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) =>
          error instanceof OpenAI.NotFoundError &&
          error.code === 'model_not_found' &&
          error.type === 'invalid_request_error',
      );
      await assert.rejects(
        openai.chat.completions.create({
          model: ruleAgent,
          messages: [{ role: 'user', content: 'hi' }],
          temperature: 0.2,
        }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && /temperature/.test(error.message),
      );
      await assert.rejects(
        openai.chat.completions.create({ model: ruleAgent, messages: [{ role: 'assistant', content: 'hi' }] }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'messages',
      );
      await assert.rejects(
        openai.chat.completions.create({
          model: ruleAgent,
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
        }),
        (error: unknown) => error instanceof OpenAI.BadRequestError,
      );
      fake.reset();
      fake.reply({ status: 500, message: 'provider down' });
      await assert.rejects(
        openai.chat.completions.create({ model: llmAgent, messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) =>
          error instanceof OpenAI.APIError && error.status === 502 && error.code === 'agent_turn_failed',
      );
      const unknownPath = await call(block.server.url, 'GET', '/v1/embeddings');
      assert.equal(unknownPath.status, 404);
      assert.equal(unknownPath.json.error.type, 'invalid_request_error');
    });

    it('API keys: shown once, stored hashed, scoped to agents, refused once revoked', async () => {
      const created = await api.post('/administration/apikeys', { json: { name: 'webui', agents: [ruleAgent] } });
      assert.equal(created.status, 201, created.text);
      const { key, id } = created.json;
      assert.match(key, /^svc-sk-/);
      const listed = await api.get('/administration/apikeys');
      assert.ok(listed.json.some((entry: any) => entry.id === id && entry.name === 'webui'));
      assert.ok(!listed.text.includes(key), 'the list never shows the key');
      const folder = block.server.storeFolder;
      if (folder !== undefined) {
        for (const file of await readdir(folder))
          assert.ok(!(await readFile(`${folder}/${file}`)).includes(key), `${file} does not hold the key`);
      }

      const keyed = new OpenAI({ apiKey: key, baseURL: `${block.server.url}/v1`, maxRetries: 0 });
      const models = [];
      for await (const model of keyed.models.list()) models.push(model.id);
      assert.deepEqual(models.sort(), [ruleAgent, `${ruleAgent}@test`].sort(), 'only the agents of the key');
      const answer = await keyed.chat.completions.create({
        model: ruleAgent,
        messages: [{ role: 'user', content: 'hello' }],
      });
      const conversation = (
        await api.get(`/agents/${(answer as unknown as { conversation_id: string }).conversation_id}`)
      ).json;
      assert.equal(conversation.userId, 'apikey-webui');
      await assert.rejects(
        keyed.chat.completions.create({ model: llmAgent, messages: [{ role: 'user', content: 'hello' }] }),
        (error: unknown) => error instanceof OpenAI.NotFoundError,
      );

      assert.equal((await api.delete(`/administration/apikeys/${id}`)).status, 200);
      await assert.rejects(keyed.models.list(), (error: unknown) => error instanceof OpenAI.AuthenticationError);
      assert.equal((await api.delete(`/administration/apikeys/${id}`)).status, 404);
      const bogus = new OpenAI({ apiKey: 'svc-sk-not-a-key', baseURL: `${block.server.url}/v1`, maxRetries: 0 });
      await assert.rejects(bogus.models.list(), (error: unknown) => error instanceof OpenAI.AuthenticationError);
      assert.equal((await api.post('/administration/apikeys', { json: { name: 'x', agents: [] } })).status, 400);
    });

    it('an Open WebUI-style client works: models list and streaming without tools', async () => {
      const created = await api.post('/administration/apikeys', { json: { name: 'owui', agents: ['*'] } });
      const headers = { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' };
      const models = await call(block.server.url, 'GET', '/v1/models', { headers });
      assert.equal(models.status, 200);
      assert.equal(models.json.object, 'list');
      assert.ok(models.json.data.every((model: any) => model.object === 'model' && typeof model.owned_by === 'string'));
      const response = await fetch(`${block.server.url}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: ruleAgent,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const data: string[] = [];
      for await (const event of sseEvents(response.body!)) data.push(event.data);
      assert.equal(data.at(-1), '[DONE]');
      const chunks = data.slice(0, -1).map((line) => JSON.parse(line));
      assert.equal(chunks[0].choices[0].delta.role, 'assistant');
      assert.equal(
        chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''),
        'Hi there!\n\nHow can I help?',
      );
      assert.deepEqual(chunks.at(-1).choices, [], 'the usage chunk comes last');
    });
  });
}

describe('OpenAI-compatible API and human in the loop with authentication on', () => {
  let idp: TestIdentityProvider;
  let server: TestServer;
  const tokens = new Map<TestUserKey, string>();
  const as = (user: TestUserKey) => client(() => server.url, { authorization: `Bearer ${tokens.get(user)}` });

  before(async () => {
    idp = await startIdentityProvider();
    for (const user of ['admin', 'chatter', 'viewer', 'approver'] as const) tokens.set(user, await idp.token(user));
    server = await startTestServer('sqlite', {
      'svc.oidc.tenant-enabled': true,
      'svc.oidc.auth-server-url': idp.issuer,
      'svc.oidc.client-id': SERVICE_AUDIENCE,
      'svc.authorization.enabled': true,
    });
  });
  after(async () => {
    await server?.dispose();
    await idp?.close();
  });

  it('takes an OIDC token or an API key; anything else is a 401 in OpenAI shape', async () => {
    const admin = as('admin');
    const agentId = await createAgent(admin, { outputSet: welcomeOutputs });
    await publishAgent(admin, agentId);
    await deploy(admin, agentId);
    const baseURL = `${server.url}/v1`;

    const withToken = new OpenAI({ apiKey: tokens.get('chatter')!, baseURL, maxRetries: 0 });
    const answer = await withToken.chat.completions.create({
      model: agentId,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const conversation = (await as('chatter').get(`/agents/${(answer as any).conversation_id}`)).json;
    assert.equal(conversation.userId, 'chuck-user', 'an OIDC caller converses as itself');
    await assert.rejects(
      withToken.chat.completions.create({
        model: agentId,
        messages: [{ role: 'user', content: 'hi' }],
        user: 'someone-else',
      }),
      (error: unknown) => error instanceof OpenAI.PermissionDeniedError && error.type === 'permission_error',
    );
    const viewer = new OpenAI({ apiKey: tokens.get('viewer')!, baseURL, maxRetries: 0 });
    await assert.rejects(viewer.models.list(), (error: unknown) => error instanceof OpenAI.PermissionDeniedError);

    const anonymous = await call(server.url, 'GET', '/v1/models');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.json.error.code, 'invalid_api_key');
    assert.equal((await call(server.url, 'GET', '/v1/nothing-here')).status, 401, 'unknown paths need a token too');

    const keyAnswer = await as('admin').post('/administration/apikeys', { json: { name: 'bot', agents: [agentId] } });
    assert.equal(keyAnswer.status, 201, keyAnswer.text);
    assert.equal(
      (await as('chatter').post('/administration/apikeys', { json: { name: 'x', agents: ['*'] } })).status,
      403,
    );
    const withKey = new OpenAI({ apiKey: keyAnswer.json.key, baseURL, maxRetries: 0 });
    const models = [];
    for await (const model of withKey.models.list()) models.push(model.id);
    assert.deepEqual(models, [agentId]);
    const keyCall = await call(server.url, 'GET', '/agentstore/agents/descriptors', {
      headers: { authorization: `Bearer ${keyAnswer.json.key}` },
    });
    assert.equal(keyCall.status, 401, 'an API key opens only the /v1 paths');
  });

  it('the waiting turns are for approvers, editors and admins, filtered by USE; the ledger names who decided', async () => {
    const admin = as('admin');
    const pausing = {
      dictionary: { words: [{ word: 'refund', expressions: 'refund(request)' }] },
      rules: {
        behaviorGroups: [
          {
            name: 'G',
            behaviorRules: [
              {
                name: 'Refund',
                actions: ['PAUSE_CONVERSATION'],
                conditions: [{ type: 'inputmatcher', configs: { expressions: 'refund(*)' } }],
              },
            ],
          },
        ],
      },
      outputs: { outputSet: [] },
    };
    const shared = await deployRuleAgent(admin, pausing);
    await publishAgent(admin, shared);
    const hidden = await deployRuleAgent(admin, pausing);
    const waitingIn = async (agentId: string) => {
      const started = await as(agentId === shared ? 'chatter' : 'admin').post(`/agents/${agentId}/start`);
      const id = started.json.conversationId as string;
      const said = await as(agentId === shared ? 'chatter' : 'admin').post(`/agents/${id}`, {
        json: { input: 'refund' },
      });
      assert.equal(said.json.conversationState, 'AWAITING_HUMAN', said.text);
      return id;
    };
    const visible = await waitingIn(shared);
    const invisible = await waitingIn(hidden);

    assert.equal((await as('chatter').get('/agents/pending-approvals')).status, 403);
    assert.equal((await as('viewer').get('/agents/pending-approvals')).status, 403);
    const listed = await as('approver').get('/agents/pending-approvals');
    assert.equal(listed.status, 200, listed.text);
    const ids = listed.json.map((item: { conversationId: string }) => item.conversationId);
    assert.ok(ids.includes(visible), 'a waiting turn of an agent the approver may use');
    assert.ok(!ids.includes(invisible), 'not one of an agent the approver may not use');
    assert.equal(
      (await as('approver').post(`/agents/${invisible}/resume`, { json: { decision: 'approve' } })).status,
      404,
    );
    const decided = await as('approver').post(`/agents/${visible}/resume`, {
      json: { decision: 'answer', answer: 'Done by hand.' },
    });
    assert.equal(decided.status, 200, decided.text);
    await server.server.audit.flush();
    const audit = (await admin.get(`/auditstore/${visible}?limit=100`)).json;
    const decision = audit.find((entry: { taskType: string }) => entry.taskType === 'hitl.decision');
    assert.equal(decision.output.actor, TEST_USERS.approver.name);
  });
});

describe('the OpenAI-compatible API switched off', () => {
  it('svc.openai-compat.enabled=false: no /v1 paths, no API key routes', async () => {
    const server = await startTestServer('sqlite', { 'svc.openai-compat.enabled': false });
    try {
      const models = await call(server.url, 'GET', '/v1/models');
      assert.equal(models.status, 404);
      assert.match(models.headers.get('content-type') ?? '', /problem\+json/);
      assert.equal((await call(server.url, 'GET', '/administration/apikeys')).status, 404);
    } finally {
      await server.dispose();
    }
  });
});
