import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import {
  createAgent,
  createResource,
  deploy,
  onEveryMessage,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { startFakeOpenAi } from './support/fake-llm/index.ts';
import type { client } from './support/http.ts';
import { lastStepValue, loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { LoopbackMcpServer } from './support/mcp-server.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * MCP-call sets (`/mcpcallsstore/mcpcalls`) and their workflow step: the tools of a real MCP server built with the
 * official SDK on loopback (Streamable HTTP at /mcp, the older HTTP+SSE at /sse) offered to the LLM task of the
 * same workflow, calls triggered by actions, headers with vault references; on both stores.
 */

type Api = ReturnType<typeof client>;
const TOKEN = 'mcp-token-SECRET-5b8e21';
const MASTER_KEY = 'mcp tools test master key 1c9d';

/** behavior (`chat` on every message) -> MCP-call step -> LLM task; a conversation started. */
async function mcpConversation(api: Api, mcpSet: unknown, llmTask: Record<string, unknown>): Promise<string> {
  const mcpUri = await createResource(api, '/mcpcallsstore/mcpcalls', mcpSet);
  const llmUri = await createResource(api, '/llmstore/llms', { tasks: [llmTask] });
  const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('chat'));
  const agentId = await createAgent(api, {
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: 'svc://ai.svc.mcpcalls', config: { uri: mcpUri } },
      { type: 'svc://ai.svc.llm', config: { uri: llmUri } },
    ],
  });
  await deploy(api, agentId);
  return (await startConversation(api, agentId)).conversationId;
}

for (const store of storeTypes) {
  describe(`MCP-call sets and MCP tools of LLM tasks on ${store}`, () => {
    const block = serverOfBlock(store, { 'svc.vault.master-key': MASTER_KEY });
    const { api } = block;
    const loopback = loopbackOfBlock({ fake: startFakeOpenAi, mcp: () => new LoopbackMcpServer().start() });
    before(async () => {
      const stored = await api.put('/secretstore/secrets/default/mcp-token', { json: { value: TOKEN } });
      assert.ok(stored.status === 200 || stored.status === 201, stored.text);
    });

    for (const transport of ['http', 'sse'] as const) {
      it(`the model calls a tool of the workflow's MCP server over ${transport}; the blacklist holds; the token is sent and kept out of memory and logs`, async () => {
        loopback.fake.reset();
        const id = await mcpConversation(
          api,
          {
            mcpServerUrl: `${loopback.mcp.url}${transport === 'sse' ? '/sse' : '/mcp'}`,
            transport,
            name: 'Weather',
            headers: { Authorization: 'Bearer ${vault:mcp-token}' },
            toolsBlacklist: ['delete-everything'],
          },
          openAiTask(loopback.fake),
        );
        loopback.fake.reply(
          { toolCalls: [{ name: 'weather_get_weather', args: { city: 'Vienna' } }] },
          { text: 'It is sunny.' },
        );
        const answer = await sendMessage(api, id, 'Weather in Vienna?');
        assert.equal(answer.conversationState, 'READY', JSON.stringify(answer));
        assert.deepEqual(answer.conversationOutputs[0].output, ['It is sunny.']);

        const offered = loopback.fake.requests[0]!.body.tools.map((tool: any) => tool.function);
        assert.deepEqual(offered.map((tool: { name: string }) => tool.name).sort(), [
          'weather_forecast',
          'weather_get_weather',
        ]);
        const weather = offered.find((tool: { name: string }) => tool.name === 'weather_get_weather');
        assert.deepEqual(weather.parameters.required, ['city'], "the tool's input schema reaches the model");
        assert.match(loopback.fake.requests[1]!.rawBody, /Sunny in Vienna, 21 °C/);
        assert.ok(loopback.mcp.toolCalls.includes('get-weather'), 'the server was called with its own tool name');
        assert.ok(loopback.mcp.headers.every((headers) => headers.authorization === `Bearer ${TOKEN}`));

        const conversation = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
        assert.deepEqual(lastStepValue(conversation, 'langchain:trace:openai:chat'), [
          {
            tool: 'weather_get_weather',
            arguments: { city: 'Vienna' },
            result: 'Sunny in Vienna, 21 °C',
            cached: false,
          },
        ]);
        assert.equal((await api.get(`/llm/tools/history/${id}`)).json[0].tool, 'weather_get_weather');
        assert.equal((await api.get(`/llm/tools/costs/conversation/${id}`)).json.toolCalls, 1);
        const detailed = await api.get(`/agents/${id}?returnDetailed=true&returnCurrentStepOnly=false`);
        assert.ok(!detailed.text.includes(TOKEN));
        assert.ok(!block.server.logLines.join('\n').includes(TOKEN));
      });
    }

    it('mcpCalls call a tool on their actions with templated arguments and store the result', async () => {
      loopback.fake.reset();
      const id = await mcpConversation(
        api,
        {
          mcpServerUrl: `${loopback.mcp.url}/mcp`,
          toolsWhitelist: ['forecast'],
          mcpCalls: [
            {
              name: 'forecast',
              actions: ['chat'],
              toolName: 'forecast',
              toolArguments: { city: '{memory.current.input}' },
              responseObjectName: 'outlook',
            },
          ],
        },
        openAiTask(loopback.fake, { enableMcpCallTools: false }),
      );
      loopback.fake.reply({ text: 'Mostly sunny.' });
      const answer = await sendMessage(api, id, 'Graz');
      assert.equal(answer.conversationState, 'READY', JSON.stringify(answer));
      assert.equal(loopback.fake.requests[0]!.body.tools, undefined, 'enableMcpCallTools false offers no MCP tools');
      const conversation = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
      assert.deepEqual(lastStepValue(conversation, 'mcpCalls:outlook'), { city: 'Graz', days: ['sun', 'rain', 'sun'] });
      assert.deepEqual(conversation.conversationOutputs.at(-1).mcpCalls.outlook.days, ['sun', 'rain', 'sun']);
    });

    it('a server that cannot be reached ends the turn in ERROR naming it', async () => {
      loopback.fake.reset();
      const id = await mcpConversation(api, { mcpServerUrl: 'http://127.0.0.1:9/mcp' }, openAiTask(loopback.fake));
      const answer = await sendMessage(api, id, 'Hello');
      assert.equal(answer.conversationState, 'ERROR');
      assert.match(answer.error, /the MCP server http:\/\/127\.0\.0\.1:9\/mcp cannot be reached/);
      assert.equal(loopback.fake.requests.length, 0);
    });

    it('is a versioned store; bad sets answer 400; an export blanks a literal credential header', async () => {
      const created = await api.post('/mcpcallsstore/mcpcalls', {
        json: { mcpServerUrl: `${loopback.mcp.url}/mcp`, headers: { 'X-Api-Key': 'literal-key-123' } },
      });
      assert.equal(created.status, 201);
      const location = created.headers.get('location')!;
      assert.match(location, /\/mcpcallsstore\/mcpcalls\/[0-9a-f]{24}\?version=1$/);
      const bad = async (body: unknown, pattern: RegExp) => {
        const answer = await api.post('/mcpcallsstore/mcpcalls', { json: body });
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.match(answer.json.detail, pattern);
      };
      await bad({ mcpServerUrl: 'ftp://x/mcp' }, /must be an http or https URL/);
      await bad({ mcpServerUrl: `${loopback.mcp.url}/mcp`, transport: 'stdio' }, /transport/);
      await bad({ mcpServerUrl: `${loopback.mcp.url}/mcp`, unknown: 1 }, /unknown/);
      await bad(
        {
          mcpServerUrl: `${loopback.mcp.url}/mcp`,
          toolsBlacklist: ['x'],
          mcpCalls: [{ name: 'a', actions: ['a'], toolName: 'x' }],
        },
        /excluded by toolsWhitelist or toolsBlacklist/,
      );

      const agentId = await createAgent(api, {
        extensions: [{ type: 'svc://ai.svc.mcpcalls', config: { uri: location } }],
      });
      const exported = await api.post(`/backup/export/${agentId}`);
      assert.equal(exported.status, 200, exported.text);
      const zip = new Uint8Array(
        await (await fetch(block.server.url + exported.headers.get('location'))).arrayBuffer(),
      );
      const files = Object.entries(unzipSync(zip));
      const [, set] = files.find(([name]) => name.endsWith('.mcpcalls.json'))!;
      assert.deepEqual(JSON.parse(strFromU8(set)).headers, { 'X-Api-Key': '' }, 'the literal key is blanked');
    });
  });
}

describe('MCP tools with the outbound URL guard on', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.security.ssrf-protection.enabled': true });
  const loopback = loopbackOfBlock({ fake: startFakeOpenAi, mcp: () => new LoopbackMcpServer().start() });

  it('a server on a loopback address is not reached', async () => {
    const id = await mcpConversation(api, { mcpServerUrl: `${loopback.mcp.url}/mcp` }, openAiTask(loopback.fake));
    const answer = await sendMessage(api, id, 'Hello');
    assert.equal(answer.conversationState, 'ERROR');
    assert.match(answer.error, /the MCP server .* cannot be reached/);
    assert.equal(loopback.mcp.headers.length, 0, 'no request reached the server');
    assert.equal(loopback.fake.requests.length, 0);
  });
});
