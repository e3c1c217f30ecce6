import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createAgent, deploy } from './support/agents.ts';
import type { client } from './support/http.ts';
import { serverOfBlock } from './support/server.ts';
import { echoTask } from './support/echo-task.ts';

/** Creates (through the REST API) an agent with one workflow running the echo task, named when `name` is given. */
function createExposableAgent(
  api: ReturnType<typeof client>,
  options: { name?: string; description?: string; a2aEnabled?: boolean; a2aSkills?: string[] },
): Promise<string> {
  const { name, ...agent } = options;
  return createAgent(api, { extensions: [{ type: 'svc://ai.svc.test.echo', config: {} }], agent, name });
}

const rpc = (method: string, params?: unknown, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const textMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...extra },
});

describe('A2A (agent-to-agent)', () => {
  const block = serverOfBlock('sqlite', {}, [echoTask]);
  const { api } = block;
  let weatherId: string;
  let unnamedId: string;
  let hiddenId: string;
  let undeployedId: string;

  before(async () => {
    weatherId = await createExposableAgent(api, {
      name: 'Weather Agent',
      description: 'Tells the weather',
      a2aEnabled: true,
      a2aSkills: ['Weather Lookup', 'Forecast'],
    });
    unnamedId = await createExposableAgent(api, { a2aEnabled: true });
    hiddenId = await createExposableAgent(api, { name: 'Hidden', a2aEnabled: false });
    undeployedId = await createExposableAgent(api, { name: 'Undeployed', a2aEnabled: true });
    for (const id of [weatherId, unnamedId, hiddenId]) await deploy(api, id);
  });

  const post = (agentId: string, body: unknown) => api.post(`/a2a/agents/${agentId}`, { json: body });
  const conversationsOf = async (agentId: string) =>
    (await api.get(`/conversationstore/conversations?agentId=${agentId}`)).json as any[];

  describe('cards', () => {
    it('an exposed agent has a card: name, description, url, version, skills from a2aSkills; no authentication by default', async () => {
      const answer = await api.get(`/a2a/agents/${weatherId}/agent.json`);
      assert.equal(answer.status, 200, answer.text);
      const card = answer.json;
      assert.equal(card.name, 'Weather Agent');
      assert.equal(card.description, 'Tells the weather');
      assert.equal(card.url, `${block.server.url}/a2a/agents/${weatherId}`);
      assert.equal(card.version, '1');
      assert.equal(card.protocolVersion, '0.3.0');
      assert.equal(card.preferredTransport, 'JSONRPC');
      assert.deepEqual(card.capabilities, {
        streaming: false,
        pushNotifications: false,
        stateTransitionHistory: false,
      });
      assert.ok(card.defaultInputModes.includes('text'));
      assert.ok(card.defaultOutputModes.includes('text'));
      assert.deepEqual(card.skills, [
        {
          id: 'weather-lookup',
          name: 'Weather Lookup',
          description: 'Skill: Weather Lookup',
          tags: ['weather-lookup'],
        },
        { id: 'forecast', name: 'Forecast', description: 'Skill: Forecast', tags: ['forecast'] },
      ]);
      assert.equal(card.authentication, undefined);
    });

    it('the default card is the oldest exposed agent; the roster lists every exposed agent; an unnamed agent gets defaults', async () => {
      const defaultCard = await api.get('/.well-known/agent.json');
      assert.equal(defaultCard.status, 200, defaultCard.text);
      assert.equal(defaultCard.json.url, `${block.server.url}/a2a/agents/${weatherId}`);
      assert.deepEqual(
        (await api.get('/.well-known/agent-card.json')).json,
        defaultCard.json,
        'the A2A 0.3 path serves it too',
      );
      const roster = await api.get('/a2a/agents');
      assert.equal(roster.status, 200);
      assert.deepEqual(
        roster.json.map((card: any) => card.url),
        [weatherId, unnamedId].map((id) => `${block.server.url}/a2a/agents/${id}`),
      );
      const unnamed = roster.json[1];
      assert.equal(unnamed.name, `Agent ${unnamedId}`);
      assert.deepEqual(
        unnamed.skills.map((skill: any) => skill.id),
        ['chat'],
      );
    });

    it('an agent that is not A2A-enabled, not deployed, unknown or malformed has no card and no task endpoint (404 problem)', async () => {
      for (const id of [hiddenId, undeployedId, '0123456789abcdef01234567', 'not-an-id']) {
        const card = await api.get(`/a2a/agents/${id}/agent.json`);
        assert.equal(card.status, 404, `${id}: ${card.text}`);
        assert.equal(card.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        const task = await post(id, rpc('message/send', textMessage('hi')));
        assert.equal(task.status, 404, task.text);
        assert.equal(task.json.status, 404);
      }
    });

    it('the latest stored version decides a2aEnabled', async () => {
      const id = await createExposableAgent(api, { name: 'Later', a2aEnabled: false });
      await deploy(api, id);
      assert.equal((await api.get(`/a2a/agents/${id}/agent.json`)).status, 404);
      const agent = (await api.get(`/agentstore/agents/${id}?version=1`)).json;
      const updated = await api.put(`/agentstore/agents/${id}?version=1`, { json: { ...agent, a2aEnabled: true } });
      assert.equal(updated.status, 200, updated.text);
      const card = await api.get(`/a2a/agents/${id}/agent.json`);
      assert.equal(card.status, 200, card.text);
      assert.equal(card.json.version, '1', 'the deployed version answers');
      const disable = await api.put(`/agentstore/agents/${id}?version=2`, { json: { ...agent, a2aEnabled: false } });
      assert.equal(disable.status, 200, disable.text);
    });

    it('capability discovery answers 404 by default', async () => {
      assert.equal((await api.get('/.well-known/capabilities')).status, 404);
      assert.equal((await api.get('/.well-known/capabilities/skills')).status, 404);
    });
  });

  describe('message/send through the @a2a-js/sdk client (v0.3 compatibility)', () => {
    let sdk: Client;
    before(async () => {
      const factory = new ClientFactory({
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
        cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      });
      sdk = await factory.createFromUrl(`${block.server.url}/a2a/agents/${weatherId}/agent.json`, '');
    });

    const send = (text: string, contextId = '') =>
      sdk.sendMessage({
        tenant: '',
        configuration: undefined,
        metadata: undefined,
        message: {
          messageId: randomUUID(),
          contextId,
          taskId: '',
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      });
    const answerText = (task: any) => task.artifacts[0].parts.map((part: any) => part.content.value).join('');

    it('two messages in one context continue one conversation; tasks/get and tasks/cancel through the SDK', async () => {
      const first: any = await send('hello');
      assert.equal(first.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(
        answerText(first),
        'Welcome!\necho: hello',
        'a new conversation answers its welcome and the message',
      );
      assert.ok(first.contextId);
      const second: any = await send('again', first.contextId);
      assert.equal(second.contextId, first.contextId);
      assert.notEqual(second.id, first.id);
      assert.equal(answerText(second), 'echo: again');
      assert.deepEqual(
        second.history.map((message: any) => message.role),
        [Role.ROLE_USER, Role.ROLE_AGENT],
      );

      const conversations = await conversationsOf(weatherId);
      assert.equal(conversations.length, 1, 'one conversation for the context');
      assert.equal(conversations[0].conversationStepSize, 3);

      const read: any = await sdk.getTask({ tenant: '', id: first.id });
      assert.equal(read.id, first.id);
      assert.equal(answerText(read), 'Welcome!\necho: hello');

      const canceled: any = await sdk.cancelTask({ tenant: '', id: second.id, metadata: undefined });
      assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
      assert.equal((await api.get(`/agents/${conversations[0].conversationId}/status`)).json, 'ENDED');

      const afterCancel: any = await send('once more', first.contextId);
      assert.equal(answerText(afterCancel), 'Welcome!\necho: once more', 'the context starts a new conversation');
      assert.equal((await conversationsOf(weatherId)).length, 2);
    });
  });

  describe('JSON-RPC over plain HTTP', () => {
    it('tasks/send (older shape): sessionId continues the conversation; the same task id adds a turn; tasks/get reads it', async () => {
      const sessionId = randomUUID();
      const params = (id: string, text: string) => ({
        id,
        sessionId,
        message: { role: 'user', parts: [{ type: 'text', text }] },
      });
      const first = await post(unnamedId, rpc('tasks/send', params('task-1', 'one'), 'r1'));
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.jsonrpc, '2.0');
      assert.equal(first.json.id, 'r1');
      const task = first.json.result;
      assert.equal(task.id, 'task-1');
      assert.equal(task.sessionId, sessionId);
      assert.equal(task.status.state, 'completed');
      assert.deepEqual(task.artifacts, [
        { name: 'response', index: 0, parts: [{ type: 'text', text: 'Welcome!\necho: one' }] },
      ]);
      assert.deepEqual(
        task.history.map((m: any) => [m.role, m.parts[0].text]),
        [
          ['user', 'one'],
          ['agent', 'Welcome!\necho: one'],
        ],
      );

      const second = await post(unnamedId, rpc('tasks/send', params('task-2', 'two')));
      assert.equal(second.json.result.artifacts[0].parts[0].text, 'echo: two');
      const third = await post(unnamedId, rpc('tasks/send', params('task-2', 'three')));
      assert.equal(third.json.result.history.length, 4);
      assert.equal(third.json.result.status.message.parts[0].text, 'echo: three');
      const conversations = await conversationsOf(unnamedId);
      assert.equal(conversations.length, 1);
      assert.equal(conversations[0].conversationStepSize, 4);

      const read = await post(unnamedId, rpc('tasks/get', { id: 'task-2', historyLength: 1 }));
      assert.equal(read.json.result.status.state, 'completed');
      assert.deepEqual(
        read.json.result.history.map((m: any) => m.parts[0].text),
        ['echo: three'],
      );
      assert.equal(
        (await post(weatherId, rpc('tasks/get', { id: 'task-2' }))).json.error.code,
        -32001,
        'tasks belong to their agent',
      );

      const canceled = await post(unnamedId, rpc('tasks/cancel', { id: 'task-2' }));
      assert.equal(canceled.json.result.status.state, 'canceled');
      assert.equal((await post(unnamedId, rpc('tasks/get', { id: 'task-2' }))).json.result.status.state, 'canceled');
      assert.equal(
        (await post(unnamedId, rpc('tasks/send', params('task-2', 'four')))).json.error.code,
        -32600,
        'a canceled task takes no more messages',
      );
    });

    it('a turn that ends in ERROR makes the task failed; message/send answers the v0.3 shape', async () => {
      const answer = await post(weatherId, rpc('message/send', textMessage('fail')));
      assert.equal(answer.status, 200, answer.text);
      const task = answer.json.result;
      assert.equal(task.kind, 'task');
      assert.equal(task.status.state, 'failed');
      assert.match(task.status.message.parts[0].text, /ERROR/);
      assert.equal(task.status.message.kind, 'message');
    });

    it('a body sent as text/plain or without content type is read as JSON-RPC too', async () => {
      const body = JSON.stringify(rpc('message/send', textMessage('plain')));
      const sent: { body: string | Uint8Array; headers: Record<string, string> }[] = [
        { body, headers: { 'content-type': 'text/plain' } },
        { body: new TextEncoder().encode(body), headers: {} }, // fetch sets no content type for bytes
      ];
      for (const options of sent) {
        const answer = await api.post(`/a2a/agents/${weatherId}`, options);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.json.result.status.state, 'completed');
      }
    });

    it('every error is a JSON-RPC error with HTTP 200', async () => {
      const cases: [string, unknown, number][] = [
        ['not JSON', '{"jsonrpc": "2.0", "method": ', -32700],
        ['empty body', '', -32700],
        ['a batch', [rpc('tasks/get', { id: 'x' })], -32600],
        ['no jsonrpc member', { id: 1, method: 'tasks/get', params: { id: 'x' } }, -32600],
        ['no method', { jsonrpc: '2.0', id: 1 }, -32600],
        ['a bad id', { jsonrpc: '2.0', id: { x: 1 }, method: 'tasks/get' }, -32600],
        ['an unknown method', rpc('tasks/unknown', {}), -32601],
        ['streaming', rpc('message/stream', textMessage('x')), -32004],
        ['no params', rpc('message/send'), -32602],
        ['params not an object', rpc('message/send', 'text'), -32602],
        ['no message', rpc('message/send', {}), -32602],
        ['parts not a list', rpc('message/send', { message: { role: 'user', parts: 'hi' } }), -32602],
        [
          'no text part',
          rpc('message/send', { message: { role: 'user', parts: [{ kind: 'data', data: {} }] } }),
          -32602,
        ],
        ['a bad contextId', rpc('message/send', textMessage('x', { contextId: 5 })), -32602],
        ['tasks/get without id', rpc('tasks/get', {}), -32602],
        ['tasks/get with a bad historyLength', rpc('tasks/get', { id: 'x', historyLength: -1 }), -32602],
        ['an unknown task', rpc('tasks/get', { id: 'nope' }), -32001],
        ['cancel of an unknown task', rpc('tasks/cancel', { id: 'nope' }), -32001],
        ['message/send to an unknown task', rpc('message/send', textMessage('x', { taskId: 'nope' })), -32001],
      ];
      for (const [what, body, code] of cases) {
        const answer =
          typeof body === 'string'
            ? await api.post(`/a2a/agents/${weatherId}`, { body, headers: { 'content-type': 'application/json' } })
            : await post(weatherId, body);
        assert.equal(answer.status, 200, `${what}: ${answer.text}`);
        assert.equal(answer.json.jsonrpc, '2.0', what);
        assert.equal(answer.json.error?.code, code, `${what}: ${answer.text}`);
        assert.equal(typeof answer.json.error.message, 'string');
      }
      const known = await post(weatherId, rpc('message/send', textMessage('x')));
      const again = await post(weatherId, rpc('message/send', textMessage('y', { taskId: known.json.result.id })));
      assert.equal(again.json.error.code, -32600, 'a completed task takes no more messages');
      assert.match(again.json.error.message, /contextId/);
    });
  });

  it('logged no errors', () => {
    const errors = block.server.logLines.filter((line) => JSON.parse(line).level >= 50);
    assert.deepEqual(errors, []);
  });
});

describe('A2A settings', () => {
  const block = serverOfBlock('sqlite', {}, [echoTask]);
  const { api } = block;
  let agentId: string;

  before(async () => {
    agentId = await createExposableAgent(api, { name: 'Skilled', a2aEnabled: true, a2aSkills: ['Weather Lookup'] });
    await deploy(api, agentId);
  });

  const credentials = async () => (await api.get(`/a2a/agents/${agentId}/agent.json`)).json.authentication?.credentials;

  it('the token endpoint: the public-token-endpoint setting verbatim, else derived from the OIDC public URL, else from the issuer URL', async () => {
    await block.server.restart({
      'svc.a2a.public-token-endpoint': 'https://tokens.example.com/issue',
      'svc.oidc.public-url': 'https://ignored.example.com/realms/x',
    });
    assert.equal(await credentials(), 'https://tokens.example.com/issue');
    const card = (await api.get(`/a2a/agents/${agentId}/agent.json`)).json;
    assert.deepEqual(card.authentication, { schemes: ['Bearer'], credentials: 'https://tokens.example.com/issue' });
    assert.equal(card.securitySchemes.oauth2.flows.clientCredentials.tokenUrl, 'https://tokens.example.com/issue');

    await block.server.restart({
      'svc.oidc.public-url': 'https://auth.example.com/realms/svc/',
      'svc.oidc.auth-server-url': 'http://keycloak:8080/realms/svc',
    });
    assert.equal(await credentials(), 'https://auth.example.com/realms/svc/protocol/openid-connect/token');

    await block.server.restart({ 'svc.oidc.auth-server-url': 'http://keycloak:8080/realms/svc' });
    assert.equal(await credentials(), 'http://keycloak:8080/realms/svc/protocol/openid-connect/token');

    await block.server.restart({});
    assert.equal(await credentials(), undefined);
  });

  it('svc.public-url is the base of card urls', async () => {
    await block.server.restart({ 'svc.public-url': 'https://agents.example.com/' });
    assert.equal(
      (await api.get(`/a2a/agents/${agentId}/agent.json`)).json.url,
      `https://agents.example.com/a2a/agents/${agentId}`,
    );
    assert.equal(
      (await api.get('/.well-known/agent.json')).json.url,
      `https://agents.example.com/a2a/agents/${agentId}`,
    );
  });

  it('capability discovery is served only when both capability settings are on', async () => {
    await block.server.restart({ 'svc.a2a.capabilities.enabled': true });
    assert.equal((await api.get('/.well-known/capabilities')).status, 404);
    await block.server.restart({ 'svc.a2a.capabilities.public': true });
    assert.equal((await api.get('/.well-known/capabilities/skills')).status, 404);

    await block.server.restart({ 'svc.a2a.capabilities.enabled': true, 'svc.a2a.capabilities.public': true });
    const all = await api.get('/.well-known/capabilities');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json, [
      {
        agentId,
        skill: 'Weather Lookup',
        confidence: 'medium',
        attributes: { skillId: 'weather-lookup', agentName: 'Skilled' },
      },
    ]);
    assert.equal(
      (await api.get('/.well-known/capabilities?skill=weather-lookup&strategy=highest_confidence')).json.length,
      1,
    );
    assert.deepEqual((await api.get('/.well-known/capabilities?skill=cooking')).json, []);
    const skills = await api.get('/.well-known/capabilities/skills');
    assert.deepEqual(skills.json, ['Weather Lookup']);
  });
});
