import type { LightMyRequestResponse } from 'fastify';
import type { RunningServer } from '../src/server.ts';
import { benchApi } from './api.ts';
import { buildBenchmarkAgent, deployAgent, type BenchmarkAgentOptions } from './agent.ts';

/**
 * Deploys the benchmark agent (with `options`) on `server`, starts `conversations` conversations with it and answers a function
 * sending turn `n` (`{"input":"hello"}`) to conversation `n` modulo their number, through Fastify's `inject` (no
 * sockets).
 */
export async function ruleTurns(
  server: RunningServer,
  conversations: number,
  options: BenchmarkAgentOptions = {},
): Promise<(n: number) => Promise<LightMyRequestResponse>> {
  const api = benchApi(server.url);
  const agentId = await buildBenchmarkAgent(api, options);
  await deployAgent(api, agentId);
  const ids: string[] = [];
  for (let n = 0; n < conversations; n++) {
    const started = await server.app.inject({ method: 'POST', url: `/agents/${agentId}/start` });
    ids.push(started.json().conversationId as string);
  }
  return (n) =>
    server.app.inject({
      method: 'POST',
      url: `/agents/${ids[n % conversations]}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"input":"hello"}',
    });
}
