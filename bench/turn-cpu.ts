/**
 * CPU time per rule-only turn, in process: the bench agent on a scratch server (embedded store), turns sent with
 * Fastify's `inject` (no sockets), CPU measured with `process.cpuUsage` around each round. The minimum over rounds
 * is the steadiest figure on a shared machine; use it to compare two commits of the turn path. Not a goal of its
 * own: `npm run bench` measures the service as a user would.
 *
 * With `llm` the agent also has the LLM turn's `openai` task (10 messages of history), calling the bench's fake
 * provider in a child process on the other core; its CPU is not counted.
 * With `httpcall` the agent also makes the HTTP-call turn's call (POST a templated body, save the JSON answer) to
 * the bench's echo server in a child process on the other core; its CPU is not counted.
 *
 * With TURN_CPU_PROFILE=<file>, the rounds (not the set-up) are CPU-profiled into that `.cpuprofile` file.
 *
 *   node bench/turn-cpu.ts [rounds=8] [turnsPerRound=800] [llm|httpcall]
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { withScratchServer } from '../scripts/scratch-server.ts';
import { ruleTurns } from './inject-turns.ts';
import { LOAD_CORE, startPinned, type BenchProcess } from './processes.ts';

const rounds = Number(process.argv[2] ?? 8);
const turnsPerRound = Number(process.argv[3] ?? 800);
const variant = process.argv[4];
const CONVERSATIONS = 64;

/** The outside service of each variant, run in a child process on the other core (its CPU is not counted). */
const OUTSIDE_SCRIPTS: Readonly<Record<string, string>> = {
  llm: 'bench/fake-openai-main.ts',
  httpcall: 'bench/echo-main.ts',
};
if (variant !== undefined && OUTSIDE_SCRIPTS[variant] === undefined)
  throw new Error(`variant ${JSON.stringify(variant)}: expected one of ${Object.keys(OUTSIDE_SCRIPTS).join(', ')}`);
const outside: BenchProcess | undefined =
  variant === undefined
    ? undefined
    : await startPinned(OUTSIDE_SCRIPTS[variant]!, {}, { core: LOAD_CORE, portVariable: 'BENCH_PORT' });
try {
  await withScratchServer(async (server) => {
    const turn = await ruleTurns(
      server,
      CONVERSATIONS,
      outside && (variant === 'llm' ? { llmBaseUrl: `${outside.url}/v1` } : { httpCallTarget: outside.url }),
    );
    const profile = process.env.TURN_CPU_PROFILE;
    const profiler = profile === undefined ? undefined : new Session();
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const perTurn: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = process.cpuUsage();
      // 16 at a time, like the bench's connections.
      for (let n = 0; n < turnsPerRound; n += 16) {
        const answers = await Promise.all(Array.from({ length: 16 }, (_, k) => turn(round * turnsPerRound + n + k)));
        for (const answer of answers) {
          if (answer.statusCode !== 200) throw new Error(`turn: ${answer.statusCode}`);
          if (outside && answer.json().conversationState !== 'READY') throw new Error(`turn: ${answer.body}`);
        }
      }
      const used = process.cpuUsage(before);
      perTurn.push((used.user + used.system) / turnsPerRound);
    }
    if (profiler && profile) {
      const { profile: taken } = await profiler.post('Profiler.stop');
      await writeFile(profile, JSON.stringify(taken));
      profiler.disconnect();
    }
    const sorted = [...perTurn].sort((a, b) => a - b);
    console.log(
      `CPU per turn (µs): min ${sorted[0]?.toFixed(0)}, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)}, rounds ${perTurn.map((v) => v.toFixed(0)).join(' ')}`,
    );
  });
} finally {
  await outside?.stop();
}
