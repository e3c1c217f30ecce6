import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  contextAction,
  createResource,
  deployAgent,
  rulesByContext,
  sendMessage,
  startConversation,
} from './support/agents.ts';
import { serverOfBlock } from './support/server.ts';
import { waitFor } from './support/process.ts';

/**
 * HTTP-call targets that misbehave (issue 19, item 5): one that never answers, one whose body never ends (fast or
 * trickled), one that sends its headers and then stalls. Every call is bounded by its timeout or its size limit,
 * the turn says what happened, the connection to the target is dropped, and the conversation goes on.
 */
describe('HTTP-call targets that hang or never stop sending', () => {
  const DEFAULT_MAX_BYTES = 20_000;
  const { api } = serverOfBlock('sqlite', { 'svc.httpcalls.default-max-response-size-bytes': DEFAULT_MAX_BYTES });
  let target: Server;
  /** Responses the target has open (a response is removed when its connection closes). */
  const open = new Set<ServerResponse>();
  let agentId: string;

  before(async () => {
    target = createServer((request, response) => {
      open.add(response);
      const timers: NodeJS.Timeout[] = [];
      response.on('close', () => {
        open.delete(response);
        for (const timer of timers) clearInterval(timer);
      });
      switch (request.url) {
        case '/hang':
          return; // never answers
        case '/stall':
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.write('the beginning, and then nothing');
          return;
        case '/trickle':
          response.writeHead(200, { 'content-type': 'text/plain' });
          timers.push(setInterval(() => response.write('x'), 20));
          return;
        case '/endless': {
          response.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = 'y'.repeat(16_384);
          const pump = () => {
            while (!response.destroyed && response.write(chunk));
          };
          response.on('drain', pump);
          pump();
          return;
        }
        default:
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const call = (name: string, extra: Record<string, unknown> = {}) => ({
      name,
      actions: [name],
      saveResponse: true,
      responseObjectName: name,
      timeoutInMillis: 500,
      request: { method: 'GET', path: `/${name}` },
      ...extra,
    });
    const httpCalls = await createResource(api, '/httpcallsstore/httpcalls', {
      targetServerUrl: base,
      httpCalls: [
        call('hang'),
        call('stall'),
        call('trickle'),
        call('endless', { timeoutInMillis: 30_000 }),
        call('endlessCapped', {
          timeoutInMillis: 30_000,
          maxResponseSizeInBytes: 1000,
          request: { method: 'GET', path: '/endless' },
        }),
        call('fine'),
      ],
    });
    const rules = await createResource(
      api,
      '/behaviorstore/behaviorsets',
      rulesByContext(['hang', 'stall', 'trickle', 'endless', 'endlessCapped', 'fine']),
    );
    agentId = await deployAgent(api, {
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: httpCalls } },
      ],
    });
  });

  after(async () => {
    target?.closeAllConnections();
    target?.close();
  });

  const say = (conversationId: string, action: string) =>
    sendMessage(api, conversationId, 'go', { context: contextAction(action), query: '?returnDetailed=true' });
  const saved = (answer: any, name: string) =>
    answer.conversationSteps.at(-1).conversationStep.find((entry: { key: string }) => entry.key === `httpCalls:${name}`)
      ?.value;
  /** The target's side of every call is closed: nothing is left streaming or waiting. */
  const targetConnectionsClosed = () => waitFor(() => (open.size === 0 ? true : undefined), 'closed connections');

  for (const [action, what] of [
    ['hang', 'never answers'],
    ['stall', 'sends its headers, then stalls'],
    ['trickle', 'trickles a body that never ends'],
  ] as const) {
    it(`a target that ${what}: the call's timeout ends the turn in ERROR with the reason; the next turn works`, async () => {
      const { conversationId } = await startConversation(api, agentId);
      const answer = await say(conversationId, action);
      assert.equal(answer.conversationState, 'ERROR');
      assert.match(answer.error, new RegExp(`HTTP call '${action}' failed: .*no answer within 500 ms`));
      await targetConnectionsClosed();
      const next = await say(conversationId, 'fine');
      assert.equal(next.conversationState, 'READY');
      assert.deepEqual(saved(next, 'fine'), { ok: true });
    });
  }

  it('a body that never ends is cut at the default size limit and its connection dropped; the turn goes on', async () => {
    const { conversationId } = await startConversation(api, agentId);
    const answer = await say(conversationId, 'endless');
    assert.equal(answer.conversationState, 'READY', answer.error);
    assert.equal(saved(answer, 'endless'), 'y'.repeat(DEFAULT_MAX_BYTES));
    await targetConnectionsClosed();
  });

  it("a call's own maxResponseSizeInBytes bounds a body that never ends too", async () => {
    const { conversationId } = await startConversation(api, agentId);
    const answer = await say(conversationId, 'endlessCapped');
    assert.equal(answer.conversationState, 'READY', answer.error);
    assert.equal(saved(answer, 'endlessCapped'), 'y'.repeat(1000));
    await targetConnectionsClosed();
  });
});
