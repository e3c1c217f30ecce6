import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgent, deploy } from './support/agents.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { echoTask } from './support/echo-task.ts';

const createEchoAgent = (api: ReturnType<typeof client>, name?: string) =>
  createAgent(api, {
    extensions: [{ type: 'svc://ai.svc.test.echo', config: {} }],
    agent: { description: 'Echoes what it hears' },
    name,
  });

type ToolAnswer = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: any };

describe('MCP server at /mcp', () => {
  let server: TestServer;
  const api = client(() => server.url);
  let mcp: Client;
  let echoId: string;
  let unnamedId: string;
  let undeployedId: string;
  let twinIds: string[];

  before(async () => {
    server = await startTestServer('sqlite', {}, [echoTask]);
    echoId = await createEchoAgent(api, 'Echo Bot!');
    unnamedId = await createEchoAgent(api);
    undeployedId = await createEchoAgent(api, 'Sleeper');
    twinIds = [await createEchoAgent(api, 'Twin'), await createEchoAgent(api, 'twin')];
    for (const id of [echoId, unnamedId, ...twinIds]) await deploy(api, id);
    mcp = new Client({ name: 'mcp-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  after(async () => {
    await mcp?.close();
    await server?.dispose();
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    (await mcp.callTool({ name, arguments: args })) as ToolAnswer;

  it('lists list_agents and one tool per deployed production agent (by name, or by id when unnamed or shared)', async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.deepEqual(
      names,
      ['agent_echo_bot', `agent_${unnamedId}`, ...twinIds.map((id) => `agent_${id}`), 'list_agents'].sort(),
    );
    assert.ok(
      !names.some((name) => name.includes('sleeper') || name.includes(undeployedId)),
      'an undeployed agent is not listed',
    );
    const echo = tools.find((tool) => tool.name === 'agent_echo_bot')!;
    assert.match(echo.description!, /Echo Bot!/);
    assert.deepEqual(Object.keys(echo.inputSchema.properties ?? {}).sort(), ['conversationId', 'message']);
    assert.deepEqual(echo.inputSchema.required, ['message']);
  });

  it('list_agents names every deployed agent and its tool', async () => {
    const answer = await call('list_agents', {});
    assert.equal(answer.isError, undefined);
    const agents = answer.structuredContent.agents;
    assert.deepEqual(agents.map((agent: any) => agent.agentId).sort(), [echoId, unnamedId, ...twinIds].sort());
    assert.deepEqual(
      agents.find((agent: any) => agent.agentId === echoId),
      { tool: 'agent_echo_bot', agentId: echoId, name: 'Echo Bot!', description: 'Echoes what it hears', version: 1 },
    );
    assert.deepEqual(JSON.parse(answer.content[0]!.text), agents);
  });

  it('an agent tool called twice continues one conversation through the conversationId it answers', async () => {
    const first = await call('agent_echo_bot', { message: 'hello' });
    assert.equal(first.isError, undefined, JSON.stringify(first));
    assert.equal(first.content[0]!.text, 'Welcome!\necho: hello');
    const { conversationId } = first.structuredContent;
    assert.deepEqual(first.structuredContent, {
      conversationId,
      conversationState: 'READY',
      output: ['Welcome!', 'echo: hello'],
    });

    const second = await call('agent_echo_bot', { message: 'again', conversationId });
    assert.equal(second.content[0]!.text, 'echo: again');
    assert.equal(second.structuredContent.conversationId, conversationId);
    const stored = (await api.get(`/conversationstore/conversations?agentId=${echoId}`)).json;
    assert.equal(stored.length, 1);
    assert.equal(stored[0].conversationStepSize, 3);
  });

  it('bad arguments and unusable conversations are tool errors, not crashes', async () => {
    const started = await call(`agent_${unnamedId}`, { message: 'hi' });
    const otherConversation = started.structuredContent.conversationId;
    const cases: [string, string, Record<string, unknown>, RegExp][] = [
      ['no message', 'agent_echo_bot', {}, /message/],
      ['a number as message', 'agent_echo_bot', { message: 42 }, /message/],
      [
        'a conversation of another agent',
        'agent_echo_bot',
        { message: 'x', conversationId: otherConversation },
        /not a conversation with this agent/,
      ],
      [
        'an unknown conversation',
        'agent_echo_bot',
        { message: 'x', conversationId: '0123456789abcdef01234567' },
        /No conversation/,
      ],
      ['an unknown tool', 'agent_nobody', { message: 'x' }, /not found/],
    ];
    for (const [what, tool, args, message] of cases) {
      const answer = await call(tool, args);
      assert.equal(answer.isError, true, `${what}: ${JSON.stringify(answer)}`);
      assert.match(answer.content[0]!.text, message, what);
    }
    assert.equal((await api.post(`/agents/${otherConversation}/endConversation`)).status, 200);
    const ended = await call(`agent_${unnamedId}`, { message: 'x', conversationId: otherConversation });
    assert.equal(ended.isError, true);
    assert.match(ended.content[0]!.text, /has ended/);

    const failed = await call('agent_echo_bot', { message: 'fail' });
    assert.equal(failed.isError, true, 'a turn ending in ERROR is flagged');
    assert.equal(failed.structuredContent.conversationState, 'ERROR');
    assert.ok((await mcp.listTools()).tools.length > 0, 'the server still answers');
  });

  it('over plain HTTP: malformed JSON is a JSON-RPC parse error, GET and DELETE answer 405', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const malformed = await api.post('/mcp', { body: '{"jsonrpc": ', headers });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.error.code, -32700);
    const invalid = await api.post('/mcp', { json: { not: 'json-rpc' }, headers });
    assert.equal(invalid.status, 400, invalid.text);
    assert.equal(invalid.json.error.code, -32700);
    for (const method of ['get', 'delete'] as const) {
      const answer = await api[method]('/mcp');
      assert.equal(answer.status, 405);
      assert.equal(answer.headers.get('allow'), 'POST');
    }
  });

  it('logged no errors', () => {
    const errors = server.logLines.filter((line) => JSON.parse(line).level >= 50);
    assert.deepEqual(errors, []);
  });
});
