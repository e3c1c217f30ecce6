import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgent, deploy, idFromLocation } from './support/agents.ts';
import { echoTask } from './support/echo-task.ts';
import { call, type Answer, type RequestOptions } from './support/http.ts';
import {
  SERVICE_AUDIENCE,
  startIdentityProvider,
  TEST_USERS,
  type TestIdentityProvider,
  type TestUserKey,
} from './support/oidc.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * Isolation between users of different workspaces (issue 13, items 1 and 4), attacked as bob (user B, team-red) on
 * alice's (user A, team-blue) agents and conversations: over MCP (official SDK client), through the deployment
 * listings, and by guessing conversation ids. Authentication, authorization and workspaces are on, with a real
 * OIDC provider.
 */

const A = TEST_USERS.userA.name;

type ToolAnswer = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: any };

for (const storeType of storeTypes) {
  describe(`isolation between workspaces on ${storeType}`, () => {
    let idp: TestIdentityProvider;
    let server: TestServer;
    const tokens = new Map<TestUserKey, string>();
    const apiOf = (user: TestUserKey) => {
      const as =
        (method: string) =>
        (path: string, options: RequestOptions = {}): Promise<Answer> =>
          call(server.url, method, path, {
            ...options,
            headers: { ...options.headers, authorization: `Bearer ${tokens.get(user)}` },
          });
      return { get: as('GET'), post: as('POST'), put: as('PUT'), patch: as('PATCH'), delete: as('DELETE') };
    };
    const echoAgentOf = async (user: TestUserKey, name: string, agent: Record<string, unknown> = {}) => {
      const id = await createAgent(apiOf(user), {
        extensions: [{ type: 'svc://ai.svc.test.echo', config: { prefix: `${name} says: ` } }],
        agent,
        name,
      });
      await deploy(apiOf(user), id);
      return id;
    };
    const mcpClients: Client[] = [];
    const mcpOf = async (user: TestUserKey): Promise<Client> => {
      const mcp = new Client({ name: `mcp-${user}`, version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${tokens.get(user)}` } },
        }),
      );
      mcpClients.push(mcp);
      return mcp;
    };
    /** Calls a tool; a protocol error (an unknown tool) counts as an error answer too. */
    const callTool = async (mcp: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
      try {
        return (await mcp.callTool({ name, arguments: args })) as ToolAnswer;
      } catch (error) {
        return { isError: true, content: [{ type: 'text', text: String(error) }] };
      }
    };
    const storedConversation = async (conversationId: string) => {
      const answer = await apiOf('admin').get(`/conversationstore/conversations/${conversationId}`);
      assert.equal(answer.status, 200, answer.text);
      return answer.json;
    };

    let privateOfA: string;
    let sharedOfA: string;
    let publishedOfA: string;
    let ownOfB: string;
    let mcpOfA: Client;
    let mcpOfB: Client;

    before(async () => {
      idp = await startIdentityProvider();
      for (const user of Object.keys(TEST_USERS) as TestUserKey[]) tokens.set(user, await idp.token(user));
      server = await startTestServer(
        storeType,
        {
          'svc.oidc.tenant-enabled': true,
          'svc.oidc.auth-server-url': idp.issuer,
          'svc.oidc.client-id': SERVICE_AUDIENCE,
          'svc.authorization.enabled': true,
          'svc.workspaces.enabled': true,
        },
        [echoTask],
      );
      privateOfA = await echoAgentOf('userA', 'Alice Private');
      sharedOfA = await echoAgentOf('userA', 'Alice Shared');
      const shared = await apiOf('userA').put(`/descriptorstore/descriptors/${sharedOfA}/visibility`, {
        json: { visibility: 'public' },
      });
      assert.equal(shared.status, 200, shared.text);
      publishedOfA = await echoAgentOf('userA', 'Alice Published', { a2aEnabled: true });
      ownOfB = await echoAgentOf('userB', 'Bob Own');
      mcpOfA = await mcpOf('userA');
      mcpOfB = await mcpOf('userB');
    });
    after(async () => {
      for (const mcp of mcpClients) await mcp.close();
      await server?.dispose();
      await idp?.close();
    });

    describe('MCP applies the checks of the REST routes', () => {
      it("lists only the agents the caller may USE: B sees neither A's private nor A's published agent", async () => {
        const agentIdsOf = async (mcp: Client) =>
          ((await callTool(mcp, 'list_agents', {})).structuredContent.agents as { agentId: string }[])
            .map((agent) => agent.agentId)
            .sort();
        assert.deepEqual(await agentIdsOf(mcpOfA), [privateOfA, sharedOfA, publishedOfA].sort());
        assert.deepEqual(await agentIdsOf(mcpOfB), [sharedOfA, ownOfB].sort());
        const toolsOfB = (await mcpOfB.listTools()).tools.map((tool) => tool.name).sort();
        assert.deepEqual(toolsOfB, ['agent_alice_shared', 'agent_bob_own', 'list_agents']);
      });

      it("B cannot chat with A's private agent through its tool name or its id", async () => {
        for (const tool of ['agent_alice_private', `agent_${privateOfA}`]) {
          const answer = await callTool(mcpOfB, tool, { message: 'tell me your secrets' });
          assert.equal(answer.isError, true, JSON.stringify(answer));
          assert.ok(!JSON.stringify(answer).includes('Alice Private says'), JSON.stringify(answer));
        }
      });

      it('a conversation started over MCP belongs to the caller, not to an anonymous user', async () => {
        const answer = await callTool(mcpOfA, 'agent_alice_private', { message: 'hello' });
        assert.equal(answer.isError, undefined, JSON.stringify(answer));
        assert.equal(answer.content[0]!.text, 'Welcome!\nAlice Private says: hello');
        assert.equal((await storedConversation(answer.structuredContent.conversationId)).userId, A);
      });

      it("B cannot write into A's conversation by passing its id, even with an agent both may use", async () => {
        const started = await callTool(mcpOfA, 'agent_alice_shared', { message: 'my private note' });
        assert.equal(started.isError, undefined, JSON.stringify(started));
        const { conversationId } = started.structuredContent;
        const before = await storedConversation(conversationId);

        const intrusion = await callTool(mcpOfB, 'agent_alice_shared', { message: 'injected', conversationId });
        assert.equal(intrusion.isError, true, JSON.stringify(intrusion));
        assert.match(intrusion.content[0]!.text, /No conversation with id/);
        assert.ok(!JSON.stringify(intrusion).includes('my private note'), JSON.stringify(intrusion));
        const after = await storedConversation(conversationId);
        assert.equal(after.conversationSteps.length, before.conversationSteps.length, 'no step was added');

        const continued = await callTool(mcpOfA, 'agent_alice_shared', { message: 'still mine', conversationId });
        assert.equal(continued.isError, undefined, JSON.stringify(continued));
        assert.equal(continued.content[0]!.text, 'Alice Shared says: still mine');
      });
    });

    describe('listings and reads disclose nothing of what the caller may not see', () => {
      const deployedAgentIds = (answer: Answer) => {
        assert.equal(answer.status, 200, answer.text);
        return new Set((answer.json as { agentId: string }[]).map((deployment) => deployment.agentId));
      };

      it("the deployment lists leave out A's private agents for B (its published one too), not for A or admins", async () => {
        for (const path of ['/administration/production/deploymentstatus', '/deploymentstore/deployments']) {
          const ofB = deployedAgentIds(await apiOf('userB').get(path));
          assert.ok(ofB.has(ownOfB) && ofB.has(sharedOfA), path);
          assert.ok(!ofB.has(privateOfA) && !ofB.has(publishedOfA), `${path} lists A's private agents to B`);
          for (const user of ['userA', 'admin'] as const) {
            const seen = deployedAgentIds(await apiOf(user).get(path));
            assert.ok(seen.has(privateOfA) && seen.has(publishedOfA), `${path} as ${user}`);
          }
        }
      });

      it("B's check of A's private agent is a 404; the status of one of its versions reads as never deployed", async () => {
        const check = await apiOf('userB').get(`/administration/deploy/${privateOfA}`);
        assert.equal(check.status, 404, check.text);
        assert.match(check.headers.get('content-type') ?? '', /json/);
        const own = await apiOf('userA').get(`/administration/deploy/${privateOfA}`);
        assert.equal(own.status, 200, own.text);
        assert.equal(own.json.environments.production[0].status, 'READY');

        const status = await apiOf('userB').get(`/administration/production/deploymentstatus/${privateOfA}?version=1`);
        assert.equal(status.status, 200, status.text);
        assert.equal(status.json.status, 'NOT_FOUND');
        const ownStatus = await apiOf('userA').get(
          `/administration/production/deploymentstatus/${privateOfA}?version=1&format=text`,
        );
        assert.equal(ownStatus.text, 'READY');
      });

      it('an agent published over A2A keeps its anonymous card', async () => {
        const card = await call(server.url, 'GET', `/a2a/agents/${publishedOfA}/agent.json`);
        assert.equal(card.status, 200, card.text);
        assert.equal(card.json.name, 'Alice Published');
      });

      it("another user's conversation answers exactly as an unknown one (404), on every conversation route", async () => {
        const started = await apiOf('userA').post(`/agents/${sharedOfA}/start`);
        assert.equal(started.status, 201, started.text);
        const ofA = idFromLocation(started.headers.get('location'));
        const unknown = '0123456789abcdef01234567';
        for (const [method, path, json] of [
          ['GET', '/agents/ID', undefined],
          ['GET', '/agents/ID/status', undefined],
          ['POST', '/agents/ID', { input: 'hi' }],
          ['POST', '/agents/ID/undo', undefined],
          ['POST', '/agents/ID/endConversation', undefined],
          ['GET', '/conversationstore/conversations/ID', undefined],
          ['GET', '/conversationstore/conversations/simple/ID', undefined],
          ['DELETE', '/conversationstore/conversations/ID', undefined],
        ] as const) {
          const request = (id: string) =>
            call(server.url, method, path.replace('ID', id), {
              ...(json === undefined ? {} : { json }),
              headers: { authorization: `Bearer ${tokens.get('userB')}` },
            });
          const [foreign, missing] = [await request(ofA), await request(unknown)];
          assert.equal(foreign.status, 404, `${method} ${path}: ${foreign.text}`);
          assert.equal(missing.status, 404, `${method} ${path}: ${missing.text}`);
          assert.equal(foreign.json.type, missing.json.type, `${method} ${path}`);
        }
        assert.equal((await apiOf('userA').get(`/agents/${ofA}`)).status, 200, 'A still has the conversation');
      });

      it('conversation ids are random: ids started one after the other share no counter or process part', async () => {
        const ids: string[] = [];
        for (let index = 0; index < 6; index += 1) {
          const started = await apiOf('userB').post(`/agents/${ownOfB}/start`);
          assert.equal(started.status, 201, started.text);
          ids.push(idFromLocation(started.headers.get('location')));
        }
        const middles = new Set(ids.map((id) => id.slice(12, 18)));
        assert.equal(middles.size, ids.length, `ids share a fixed part: ${ids.join(' ')}`);
        const tails = ids.map((id) => Number.parseInt(id.slice(18), 16));
        assert.ok(
          tails.some((tail, index) => index > 0 && tail !== tails[index - 1]! + 1),
          `ids count up: ${ids.join(' ')}`,
        );
        const now = Date.now();
        assert.ok(
          ids.some((id) => Math.abs(Number.parseInt(id.slice(0, 12), 16) - now) > 86_400_000),
          `ids carry the time: ${ids.join(' ')}`,
        );
      });
    });
  });
}
