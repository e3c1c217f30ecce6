import type { RunningServer } from '../src/server.ts';
import { benchApi, type BenchApi } from './api.ts';
import { buildBenchmarkAgent, deployAgent } from './agent.ts';

/**
 * The bench agent built and deployed on a scratch server (`scripts/scratch-server.ts`), with `count`
 * conversations started through Fastify's `inject`: the set-up of the in-process CPU measurements.
 */
export async function scratchBenchAgent(
  server: RunningServer,
  count: number,
): Promise<{ api: BenchApi; agentId: string; conversations: string[] }> {
  const api = benchApi(server.url);
  const agentId = await buildBenchmarkAgent(api);
  await deployAgent(api, agentId);
  const conversations: string[] = [];
  for (let n = 0; n < count; n++) {
    const started = await server.app.inject({ method: 'POST', url: `/agents/${agentId}/start` });
    conversations.push(started.json().conversationId as string);
  }
  return { api, agentId, conversations };
}
