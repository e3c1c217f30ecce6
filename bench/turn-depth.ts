/**
 * CPU time per rule-only turn at step ~10 and at step ~1000 (goal W3), in process: the bench agent on a scratch
 * server (embedded store), one conversation at a time, turns sent one after the other with Fastify's `inject` (no
 * sockets), CPU measured with `process.cpuUsage` around each round. Shallow and deep rounds alternate, so both see
 * the same load on a shared machine; each shallow round runs on a fresh conversation driven to step 10 first, the
 * deep rounds go on with one conversation driven to step 1000. Prints the minimum and median of each and the ratio
 * of the minimums (W3's target: at most 1.1).
 *
 *   node bench/turn-depth.ts [rounds=12] [turnsPerRound=100]
 */
import { withScratchServer } from '../scripts/scratch-server.ts';
import { benchApi } from './api.ts';
import { buildBenchmarkAgent, deployAgent } from './agent.ts';

const rounds = Number(process.argv[2] ?? 12);
const turnsPerRound = Number(process.argv[3] ?? 100);
const SHALLOW = 10;
const DEEP = Number(process.env.TURN_DEPTH_DEEP ?? 1000);

await withScratchServer(async (server) => {
  const api = benchApi(server.url);
  const agentId = await buildBenchmarkAgent(api);
  await deployAgent(api, agentId);
  const start = async () => {
    const started = await server.app.inject({ method: 'POST', url: `/agents/${agentId}/start` });
    return started.json().conversationId as string;
  };
  const turns = async (conversationId: string, count: number) => {
    for (let n = 0; n < count; n++) {
      const answer = await server.app.inject({
        method: 'POST',
        url: `/agents/${conversationId}`,
        headers: { 'content-type': 'application/json' },
        payload: '{"input":"hello"}',
      });
      if (answer.statusCode !== 200) throw new Error(`turn: ${answer.statusCode} ${answer.body}`);
    }
  };
  const cpuPerTurn = async (conversationId: string) => {
    const before = process.cpuUsage();
    await turns(conversationId, turnsPerRound);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / turnsPerRound;
  };

  const deep = await start();
  await turns(deep, DEEP - 1);
  await turns(await start(), DEEP); // warms the JIT on the same path as both phases
  const shallowRounds: number[] = [];
  const deepRounds: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const shallow = await start();
    await turns(shallow, SHALLOW - 1);
    shallowRounds.push(await cpuPerTurn(shallow));
    deepRounds.push(await cpuPerTurn(deep));
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]! };
  };
  const atShallow = summary(shallowRounds);
  const atDeep = summary(deepRounds);
  const show = (values: number[]) => values.map((value) => value.toFixed(0)).join(' ');
  console.log(
    `CPU per turn (µs) at step ${SHALLOW}: min ${atShallow.min.toFixed(0)}, median ${atShallow.median.toFixed(0)} (${show(shallowRounds)})`,
  );
  console.log(
    `CPU per turn (µs) at step ${DEEP}: min ${atDeep.min.toFixed(0)}, median ${atDeep.median.toFixed(0)} (${show(deepRounds)})`,
  );
  console.log(
    `at step ${DEEP} ÷ at step ${SHALLOW}: ${(atDeep.min / atShallow.min).toFixed(3)} (minimums), ${(atDeep.median / atShallow.median).toFixed(3)} (medians)`,
  );
});
