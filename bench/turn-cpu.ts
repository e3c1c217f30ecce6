/**
 * CPU time per rule-only turn, in process: the bench agent on a scratch server (embedded store), turns sent with
 * Fastify's `inject` (no sockets), CPU measured with `process.cpuUsage` around each round. The minimum over rounds
 * is the steadiest figure on a shared machine; use it to compare two commits of the turn path. Not a goal of its
 * own: `npm run bench` measures the service as a user would.
 *
 *   node bench/turn-cpu.ts [rounds=8] [turnsPerRound=800]
 */
import { withScratchServer } from '../scripts/scratch-server.ts';
import { scratchBenchAgent } from './scratch-agent.ts';

const rounds = Number(process.argv[2] ?? 8);
const turnsPerRound = Number(process.argv[3] ?? 800);
const CONVERSATIONS = 64;

await withScratchServer(async (server) => {
  const { conversations } = await scratchBenchAgent(server, CONVERSATIONS);
  const turn = (n: number) =>
    server.app.inject({
      method: 'POST',
      url: `/agents/${conversations[n % CONVERSATIONS]}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"input":"hello"}',
    });
  const perTurn: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    // 16 at a time, like the bench's connections.
    for (let n = 0; n < turnsPerRound; n += 16) {
      const answers = await Promise.all(Array.from({ length: 16 }, (_, k) => turn(round * turnsPerRound + n + k)));
      for (const answer of answers) if (answer.statusCode !== 200) throw new Error(`turn: ${answer.statusCode}`);
    }
    const used = process.cpuUsage(before);
    perTurn.push((used.user + used.system) / turnsPerRound);
  }
  const sorted = [...perTurn].sort((a, b) => a - b);
  console.log(
    `CPU per turn (µs): min ${sorted[0]?.toFixed(0)}, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)}, rounds ${perTurn.map((v) => v.toFixed(0)).join(' ')}`,
  );
});
