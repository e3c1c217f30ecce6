import type { LightMyRequestResponse } from 'fastify';
import type { RunningServer } from '../src/server.ts';
import { benchApi, type BenchApi } from './api.ts';
import { buildBenchmarkAgent, deployAgent, type BenchmarkAgentOptions } from './agent.ts';

/**
 * The set-up of the in-process measurements: the benchmark agent (with `options`) built and deployed on a scratch
 * server (`scripts/scratch-server.ts`), and `count` conversations started with it through Fastify's `inject`.
 */
export async function benchConversations(
  server: RunningServer,
  count: number,
  options: BenchmarkAgentOptions = {},
): Promise<{ api: BenchApi; agentId: string; conversations: string[] }> {
  const api = benchApi(server.url);
  const agentId = await buildBenchmarkAgent(api, options);
  await deployAgent(api, agentId);
  const conversations: string[] = [];
  for (let n = 0; n < count; n++) {
    const started = await server.app.inject({ method: 'POST', url: `/agents/${agentId}/start` });
    conversations.push(started.json().conversationId as string);
  }
  return { api, agentId, conversations };
}

/** A native rule-only turn (`{"input":"hello"}`) to `conversationId`, through `inject` (no sockets). */
export function nativeTurn(server: RunningServer, conversationId: string): Promise<LightMyRequestResponse> {
  return server.app.inject({
    method: 'POST',
    url: `/agents/${conversationId}`,
    headers: { 'content-type': 'application/json' },
    payload: '{"input":"hello"}',
  });
}

/**
 * `benchConversations`, answered as a function sending turn `n` to conversation `n` modulo their number.
 */
export async function ruleTurns(
  server: RunningServer,
  count: number,
  options: BenchmarkAgentOptions = {},
): Promise<(n: number) => Promise<LightMyRequestResponse>> {
  const { conversations } = await benchConversations(server, count, options);
  return (n) => nativeTurn(server, conversations[n % count]!);
}
