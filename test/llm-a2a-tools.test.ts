import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createAgent, deploy, sendMessage } from './support/agents.ts';
import { echoTask } from './support/echo-task.ts';
import { startFakeOpenAi } from './support/fake-llm/index.ts';
import { conversationWith, lastStepValue, loopbackOfBlock, openAiTask } from './support/llm-agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Peer agents as tools (`a2aAgents`): the model calls a skill of a peer, which is asked with the A2A protocol through
 * the official SDK client. Peers: an agent of this service's own A2A endpoint, and a loopback peer speaking A2A
 * JSON-RPC (v0.3 wire format) that records what it receives. On both stores.
 */

const PEER_KEY = 'peer-key-SECRET-7f3a9c01';
const MASTER_KEY = 'a2a tools test master key 9e2b';

/** A loopback A2A peer: its card at /agent.json (skills `lookup` and `translate`), `message/send` at /rpc. */
class LoopbackPeer {
  readonly received: Array<{ headers: IncomingHttpHeaders; body: any }> = [];
  cardReads = 0;
  readonly #server: Server;
  url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        if (request.method === 'GET') {
          this.cardReads++;
          response.end(JSON.stringify(this.#card()));
          return;
        }
        const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
        this.received.push({ headers: request.headers, body });
        const text = body.params.message.parts.map((part: { text: string }) => part.text).join('');
        response.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: {
              kind: 'task',
              id: `task-${this.received.length}`,
              contextId: 'ctx-1',
              status: { state: 'completed' },
              artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text: `Order ${text} ships tomorrow.` }] }],
            },
          }),
        );
      });
    });
  }

  #card() {
    return {
      protocolVersion: '0.3.0',
      name: 'Order Desk',
      description: 'Knows every order',
      url: `${this.url}/rpc`,
      preferredTransport: 'JSONRPC',
      version: '1',
      capabilities: { streaming: false },
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [
        { id: 'lookup', name: 'Order lookup', description: 'Finds an order', tags: [] },
        { id: 'translate', name: 'Translate', description: 'Translates', tags: [] },
      ],
    };
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

for (const store of storeTypes) {
  describe(`LLM tasks calling peer agents (A2A) on ${store}`, () => {
    const block = serverOfBlock(store, { 'svc.vault.master-key': MASTER_KEY }, [echoTask]);
    const { api } = block;
    const loopback = loopbackOfBlock({ fake: startFakeOpenAi, peer: () => new LoopbackPeer().start() });

    it("calls a skill of an agent on this service's own A2A endpoint; the answer goes back to the model and into the trace and tool history", async () => {
      loopback.fake.reset();
      const peerId = await createAgent(api, {
        extensions: [{ type: 'svc://ai.svc.test.echo', config: {} }],
        agent: { a2aEnabled: true, a2aSkills: ['Repeat It'], description: 'Repeats' },
        name: 'Echo Agent',
      });
      await deploy(api, peerId);
      const id = await conversationWith(
        api,
        openAiTask(loopback.fake, {
          a2aAgents: [{ url: `${block.server.url}/a2a/agents/${peerId}/agent.json`, name: 'echo' }],
        }),
      );
      loopback.fake.reply(
        { toolCalls: [{ name: 'echo_repeat_it', args: { message: 'hello peer' } }] },
        { text: 'Done.' },
      );
      const answer = await sendMessage(api, id, 'Ask the echo agent');
      assert.equal(answer.conversationState, 'READY', JSON.stringify(answer));
      assert.deepEqual(answer.conversationOutputs[0].output, ['Done.']);

      const offered = loopback.fake.requests[0]!.body.tools.map((tool: any) => tool.function);
      assert.deepEqual(
        offered.map((tool: { name: string }) => tool.name),
        ['echo_repeat_it'],
      );
      assert.match(offered[0].description, /Ask the agent 'echo' \(Repeats\) to use its skill 'Repeat It'/);
      assert.match(
        loopback.fake.requests[1]!.rawBody,
        /Welcome!\\necho: hello peer/,
        'the peer answer goes back to the model',
      );

      const conversation = (await api.get(`/agents/${id}?returnDetailed=true`)).json;
      assert.deepEqual(lastStepValue(conversation, 'langchain:trace:openai:chat'), [
        {
          tool: 'echo_repeat_it',
          arguments: { message: 'hello peer' },
          result: 'Welcome!\necho: hello peer',
          cached: false,
        },
      ]);
      const history = (await api.get(`/llm/tools/history/${id}`)).json;
      assert.equal(history[0].tool, 'echo_repeat_it');
      assert.equal((await api.get(`/llm/tools/costs/conversation/${id}`)).json.toolCalls, 1);
      const peerConversations = (await api.get(`/conversationstore/conversations?agentId=${peerId}`)).json;
      assert.equal(peerConversations.length, 1, 'the peer ran one conversation');
    });

    it('sends the vault key to a loopback peer as a bearer token, filters its skills, and keeps the key out of memory and logs', async () => {
      loopback.fake.reset();
      const stored = await api.put('/secretstore/secrets/default/peer-key', { json: { value: PEER_KEY } });
      assert.ok(stored.status === 200 || stored.status === 201, stored.text);
      const id = await conversationWith(
        api,
        openAiTask(loopback.fake, {
          a2aAgents: [
            { url: loopback.peer.url, apiKey: '${vault:peer-key}', skillsFilter: ['Order lookup'], timeoutMs: 5000 },
          ],
        }),
      );
      loopback.fake.reply(
        { toolCalls: [{ name: 'order_desk_lookup', args: { message: '#4711' } }] },
        { text: 'Tomorrow.' },
      );
      const answer = await sendMessage(api, id, 'Where is my order #4711?');
      assert.deepEqual(answer.conversationOutputs[0].output, ['Tomorrow.']);
      assert.deepEqual(
        loopback.fake.requests[0]!.body.tools.map((tool: any) => tool.function.name),
        ['order_desk_lookup'],
        'skillsFilter keeps one skill (by name); the tool is named after the card',
      );
      const call = loopback.peer.received.at(-1)!;
      assert.equal(call.headers.authorization, `Bearer ${PEER_KEY}`);
      assert.equal(call.body.method, 'message/send');
      assert.match(loopback.fake.requests[1]!.rawBody, /Order #4711 ships tomorrow\./);

      const detailed = await api.get(`/agents/${id}?returnDetailed=true&returnCurrentStepOnly=false`);
      assert.ok(!detailed.text.includes(PEER_KEY), 'the key is not in the conversation');
      assert.ok(!block.server.logLines.join('\n').includes(PEER_KEY), 'the key is not in the logs');
    });

    it('a peer that cannot be reached ends the turn in ERROR naming it; a model call is not made', async () => {
      loopback.fake.reset();
      const id = await conversationWith(
        api,
        openAiTask(loopback.fake, { a2aAgents: [{ url: 'http://127.0.0.1:9/agent.json' }] }),
      );
      const answer = await sendMessage(api, id, 'Hello');
      assert.equal(answer.conversationState, 'ERROR');
      assert.match(
        answer.error,
        /the agent card of the A2A agent at http:\/\/127\.0\.0\.1:9\/agent\.json cannot be read/,
      );
      assert.equal(loopback.fake.requests.length, 0);
    });

    it('refuses a key written into the configuration and a URL that is not http(s) with 400', async () => {
      const plainKey = await api.post('/llmstore/llms', {
        json: { tasks: [openAiTask(loopback.fake, { a2aAgents: [{ url: loopback.peer.url, apiKey: 'plain-key' }] })] },
      });
      assert.equal(plainKey.status, 400);
      assert.match(plainKey.json.detail, /must be a vault reference/);
      assert.ok(!plainKey.text.includes('plain-key'), 'the refused key is not echoed');
      const badUrl = await api.post('/llmstore/llms', {
        json: { tasks: [openAiTask(loopback.fake, { a2aAgents: [{ url: 'ftp://peer/agent.json' }] })] },
      });
      assert.equal(badUrl.status, 400);
      assert.match(badUrl.json.detail, /must be an http or https URL/);
    });
  });
}

describe('LLM tasks calling peer agents with the outbound URL guard on', () => {
  const { api } = serverOfBlock('sqlite', { 'svc.security.ssrf-protection.enabled': true });
  const loopback = loopbackOfBlock({ fake: startFakeOpenAi, peer: () => new LoopbackPeer().start() });

  it('a peer on a loopback address is not reached', async () => {
    const id = await conversationWith(api, openAiTask(loopback.fake, { a2aAgents: [{ url: loopback.peer.url }] }));
    const answer = await sendMessage(api, id, 'Hello');
    assert.equal(answer.conversationState, 'ERROR');
    assert.match(answer.error, /the agent card of the A2A agent at .* cannot be read/);
    assert.match(answer.error, /not allowed|private|loopback|blocked/i, answer.error);
    assert.equal(loopback.peer.cardReads, 0, 'not even the card is read');
    assert.equal(loopback.fake.requests.length, 0);
  });
});
