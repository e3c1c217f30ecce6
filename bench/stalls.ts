/**
 * `npm run bench:stalls`: what blocks the service's event loop under the latency goal's load (issue 15: at half of
 * W1's throughput, p99 <= 5 ms, max <= 50 ms). The service runs pinned like in `npm run bench`, with the stall probe
 * preloaded (event-loop delay histogram, GC pauses) and a CPU profile; wrk offers the W1 load paced at half of a
 * W1 throughput measured first (or `STALLS_RATE`), and the profile's samples of that window are cut into blocks
 * (runs of non-idle samples) and segments of one cause. Prints the latency, the loop delay, the longest blocks and
 * the longest synchronous pieces of work by cause; the whole result goes to bench/results/stalls.json, the profile to
 * bench/results/stalls.cpuprofile.
 *
 *   npm run bench:stalls                          # 30 s paced; STALLS_SECONDS, STALLS_RATE, STALLS_TOP
 *   STALLS_PROFILE=0 npm run bench:stalls         # without the CPU profile (its sampling costs a little)
 *   STALLS_SIGNED=1 npm run bench:stalls          # with a vault master key: audit entries are signed
 *   STALLS_AGENT=llm npm run bench:stalls         # the LLM turn's agent (or httpcall), its provider on the load core
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { agentOn } from './agent.ts';
import { benchApi } from './api.ts';
import { blocksOf, GC, type Block, type CpuProfile, type Segment } from './cpu-profile-blocks.ts';
import { youngCollectionsIn, type YoungCollections } from './gc-trace.ts';
import { runLoad } from './load.ts';
import { measurementProblem, type LoadSpec } from './measure.ts';
import { type BenchProcess, LOAD_CORE, pinThisProcess, startPinned, startService } from './processes.ts';
import { openBenchStore, serviceEnvironment } from './store.ts';

/** `PerformanceEntry.detail.kind` of a GC entry (perf_hooks constants). */
const GC_KINDS: Readonly<Record<number, string>> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };
const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = join(projectRoot, 'bench', 'results', 'stalls.json');
/** The service's main-thread profile of the run (Chrome DevTools opens it), kept for a closer look. */
const profileFile = join(projectRoot, 'bench', 'results', 'stalls.cpuprofile');

const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
  return value;
};
const seconds = setting('STALLS_SECONDS', 30);
const askedRate = setting('STALLS_RATE', 0);
const top = setting('STALLS_TOP', 15);
/** STALLS_SURVIVORS=1: what survives young collections in the window, by allocation site (the service's own view). */
const survivors = process.env.STALLS_SURVIVORS === '1';
const survivorsFile = join(projectRoot, 'bench', 'results', 'stalls-survivors.heapprofile');
const profiling = process.env.STALLS_PROFILE !== '0';
/** With a vault master key, so the audit ledger signs its entries (the bench runs without one). */
const signed = process.env.STALLS_SIGNED === '1';
/** The agent of the W1 load (`rules`) or of the LLM or HTTP-call turn, whose outside service runs on the load core. */
const agentKind = process.env.STALLS_AGENT ?? 'rules';
const OUTSIDE_SERVICES: Readonly<Record<string, string | undefined>> = {
  rules: undefined,
  llm: 'bench/fake-openai-main.ts',
  httpcall: 'bench/echo-main.ts',
};
if (!(agentKind in OUTSIDE_SERVICES)) throw new Error(`STALLS_AGENT must be one of ${Object.keys(OUTSIDE_SERVICES)}`);
/** Blocks and pieces of work shorter than this are not listed (the goal leaves a few ms per turn at most). */
const LONG_MS = 2;
const CONNECTIONS = 16;
const CONVERSATIONS = 64;
const MESSAGE = JSON.stringify({ input: 'hello' });

interface ProbeReport {
  readonly seconds: number;
  readonly loopDelayMs: { p50: number; p99: number; p999: number; max: number };
  readonly gcPauses: Array<{ atMs: number; ms: number; kind: number }>;
  readonly windowMs: { from: number; to: number };
}

async function main(): Promise<void> {
  pinThisProcess(LOAD_CORE);
  const work = await mkdtemp(join(tmpdir(), 'svc-stalls-'));
  const store = await openBenchStore();
  const probeOut = join(work, 'probe.json');
  const nodeOptions = ['--import', './bench/stall-probe.ts'];
  if (profiling) nodeOptions.push('--cpu-prof', '--cpu-prof-dir', work, '--cpu-prof-interval', '250');
  // Extra V8 or Node flags for the service under study, e.g. STALLS_NODE_FLAGS='--trace-gc-nvp'; its output goes to
  // bench/results/stalls-service.log.
  nodeOptions.push(...(process.env.STALLS_NODE_FLAGS ?? '').split(' ').filter(Boolean));
  const service = await startService(
    {
      ...serviceEnvironment(store, signed ? { 'svc.vault.master-key': 'bench-stalls-master-key' } : {}),
      STALL_PROBE_OUT: probeOut,
      ...(survivors ? { STALL_PROBE_SURVIVORS: survivorsFile } : {}),
    },
    { nodeOptions },
  );
  let stopped = false;
  let outside: BenchProcess | undefined;
  try {
    const outsideScript = OUTSIDE_SERVICES[agentKind];
    outside =
      outsideScript === undefined
        ? undefined
        : await startPinned(outsideScript, {}, { core: LOAD_CORE, portVariable: 'BENCH_PORT' });
    const { paths } = await agentOn(
      benchApi(service.url),
      CONVERSATIONS,
      outside === undefined
        ? {}
        : agentKind === 'llm'
          ? { llmBaseUrl: `${outside.url}/v1` }
          : { httpCallTarget: outside.url },
    );
    const spec: LoadSpec = { connections: CONNECTIONS, body: MESSAGE, paths };
    let rate = askedRate;
    if (rate === 0) {
      const w1 = await runLoad(service.url, { ...spec, duration: 5, warmupSeconds: 1 });
      rate = Math.max(1, Math.round(w1.reqPerSec / 2));
      console.log(
        `stalls: ${agentKind === 'rules' ? 'W1' : `the ${agentKind} agent`} ${w1.reqPerSec.toFixed(0)} turns/s${profiling ? ' (profiled)' : ''}; pacing at ${rate}/s`,
      );
    } else {
      // Warms up like the bench's latency run, which follows the throughput runs: first-use compilations
      // (response serialisers, their validators) are not what the goal is about.
      await runLoad(service.url, { ...spec, duration: 3, rate });
    }
    const wal = `${store.settings['svc.datastore.sqlite.path']}-wal`;
    const walRestartsBefore = walRestarts(wal);
    const servedBefore = await serverSideBuckets(service.url);
    process.kill(service.pid, 'SIGUSR2');
    const from = hrMicros();
    const paced = await runLoad(service.url, { ...spec, duration: seconds, rate });
    const to = hrMicros();
    process.kill(service.pid, 'SIGUSR2');
    const servedAfter = await serverSideBuckets(service.url);
    console.log(`server side (request received to answer sent): ${serverSideSummary(servedBefore, servedAfter)}`);
    const probe = await readWhenWritten<ProbeReport>(probeOut);
    const walFile = { bytes: fileSize(wal), restarts: walRestarts(wal) - walRestartsBefore };
    await service.stop();
    stopped = true;
    await writeFile(join(projectRoot, 'bench', 'results', 'stalls-service.log'), service.output());
    const problem = measurementProblem(paced);
    let blocks: Block[] = [];
    if (profiling) {
      const profile = mainThreadProfile(work, service.pid);
      blocks = blocksOf(profile, projectRoot, from, to);
      await mkdir(dirname(profileFile), { recursive: true });
      await writeFile(profileFile, JSON.stringify(profile));
    }
    const young = youngCollectionsIn(service.output(), probe.windowMs.from, probe.windowMs.to);
    report({ rate, paced, probe, walFile, blocks, problem, young });
  } finally {
    if (!stopped) await service.stop();
    await outside?.stop();
    await store.dispose();
    await rm(work, { recursive: true, force: true });
  }
}

const fileSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);

/** The WAL header's checkpoint sequence number: how often the WAL started over from its beginning. */
function walRestarts(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(16);
    return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : 0;
  } finally {
    closeSync(fd);
  }
}
const hrMicros = () => Number(process.hrtime.bigint() / 1000n);

async function readWhenWritten<T>(path: string): Promise<T> {
  for (let tries = 0; tries < 100 && !existsSync(path); tries++) await setTimeout(50);
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** `--cpu-prof` writes one profile per thread; the main thread's carries thread id 0. */
function mainThreadProfile(dir: string, pid: number): CpuProfile {
  const name = readdirSync(dir).find((file) => file.endsWith('.cpuprofile') && file.includes(`.${pid}.0.`));
  if (name === undefined) throw new Error(`no CPU profile of process ${pid} in ${dir}`);
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile;
}

const ms = (micros: number) => micros / 1000;
const fixed = (value: number, digits = 1) => value.toFixed(digits);

function report({
  rate,
  paced,
  probe,
  walFile,
  blocks,
  problem,
  young,
}: {
  rate: number;
  paced: Awaited<ReturnType<typeof runLoad>>;
  probe: ProbeReport;
  walFile: { bytes: number; restarts: number };
  blocks: Block[];
  problem: string | undefined;
  young: YoungCollections | undefined;
}): void {
  const { latencyMs } = paced;
  console.log(
    `\nlatency: ${rate} turns/s asked for ${seconds} s, ${fixed(paced.reqPerSec, 0)} served; ` +
      `p50 ${fixed(latencyMs.p50, 2)} ms, p99 ${fixed(latencyMs.p99, 2)} ms, max ${fixed(latencyMs.max, 1)} ms` +
      (problem ? ` (${problem})` : ''),
  );
  const delay = probe.loopDelayMs;
  console.log(
    `event-loop delay: p50 ${fixed(delay.p50, 2)} ms, p99 ${fixed(delay.p99, 2)} ms, p99.9 ${fixed(delay.p999, 2)} ms, max ${fixed(delay.max, 1)} ms`,
  );
  const pauses = probe.gcPauses.map((pause) => pause.ms).sort((a, b) => b - a);
  const longPauses = pauses.filter((pause) => pause > LONG_MS);
  const longest = [...probe.gcPauses].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `GC pauses: ${pauses.length}, ${longPauses.length} over ${LONG_MS} ms, longest ${longest
      .map((p) => `${fixed(p.ms)} (${GC_KINDS[p.kind] ?? p.kind})`)
      .join(', ')} ms`,
  );
  console.log(
    `WAL file at the end: ${fixed(walFile.bytes / 2 ** 20)} MiB; it started over ${walFile.restarts} times meanwhile`,
  );
  if (young) {
    const mb = (bytes: number) => fixed(bytes / 1e6, 1);
    console.log(
      `young collections (--trace-gc-nvp): ${young.count}, ${mb(young.allocatedBytes)} MB allocated, ${mb(young.promotedBytes)} MB promoted (${fixed((100 * young.promotedBytes) / young.allocatedBytes, 1)}%, ${fixed(young.promotedBytes / paced.requests / 1000, 1)} KB a turn), pauses median ${fixed(young.pauseMs.median, 1)} ms, max ${fixed(young.pauseMs.max, 1)} ms; ${young.fullCollections} full collections`,
    );
  }
  const summary: Record<string, unknown> = {
    rate,
    seconds,
    paced,
    walFile,
    probe: { ...probe, gcPauses: pauses.slice(0, 50) },
    youngCollections: young,
  };
  if (blocks.length > 0) {
    const long = blocks.filter((block) => ms(block.micros) > LONG_MS);
    console.log(`\nblocks (runs of non-idle samples) over ${LONG_MS} ms: ${long.length} of ${blocks.length}; longest:`);
    for (const block of [...long].sort((a, b) => b.micros - a.micros).slice(0, top))
      console.log(`  ${fixed(ms(block.micros)).padStart(6)} ms  ${composition(block)}`);
    const pieces = longestPiecesByCause(blocks);
    console.log(
      `\nlongest synchronous pieces of work by cause (over ${LONG_MS} ms: count, longest; inside: leaf functions):`,
    );
    for (const { cause, count, longest } of pieces.slice(0, top)) {
      console.log(`  ${String(count).padStart(5)} × ≤ ${fixed(ms(longest.micros)).padStart(6)} ms  ${cause}`);
      console.log(`      ${leaves(longest)}`);
    }
    summary.blocks = {
      count: blocks.length,
      over2ms: long.length,
      longest: [...long]
        .sort((a, b) => b.micros - a.micros)
        .slice(0, 50)
        .map((block) => ({ ms: ms(block.micros), composition: composition(block) })),
    };
    summary.pieces = pieces.map(({ cause, count, longest }) => ({
      cause,
      over2ms: count,
      longestMs: ms(longest.micros),
      leaves: leaves(longest),
    }));
  }
  void mkdir(dirname(resultsFile), { recursive: true }).then(() =>
    writeFile(resultsFile, `${JSON.stringify(summary, null, 2)}\n`),
  );
}

/** A block's causes by time, largest first. */
function composition(block: Block): string {
  const byCause = new Map<string, number>();
  for (const segment of block.segments) byCause.set(segment.cause, (byCause.get(segment.cause) ?? 0) + segment.micros);
  return [...byCause]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([cause, micros]) => `${fixed(ms(micros))} ${cause === GC ? 'GC' : cause}`)
    .join(' | ');
}

function leaves(segment: Segment): string {
  return [...segment.leaves]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([leaf, micros]) => `${fixed(ms(micros))} ${leaf}`)
    .join(' | ');
}

/** Per cause: its segments over `LONG_MS`, and the longest one; causes with the longest pieces first. */
function longestPiecesByCause(blocks: readonly Block[]) {
  const byCause = new Map<string, { cause: string; count: number; longest: Segment }>();
  for (const segment of blocks.flatMap((block) => block.segments)) {
    if (ms(segment.micros) <= LONG_MS) continue;
    const entry = byCause.get(segment.cause);
    if (entry === undefined) byCause.set(segment.cause, { cause: segment.cause, count: 1, longest: segment });
    else {
      entry.count++;
      if (segment.micros > entry.longest.micros) entry.longest = segment;
    }
  }
  return [...byCause.values()].sort((a, b) => b.longest.micros - a.longest.micros);
}

try {
  await main();
} catch (error) {
  console.error('stalls: failed:', error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
}

/** The service's own request-duration histogram (POST requests, every route), cumulative counts by upper bound. */
async function serverSideBuckets(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/q/metrics`)).text();
  const buckets = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^svc_http_server_requests_seconds_bucket\{(.*)\} (\d+)$/.exec(line);
    if (!match || !match[1]!.includes('method="POST"')) continue;
    const bound = /le="([^"]+)"/.exec(match[1]!)![1]!;
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/** The share of the window's requests that took longer than each bound, from two scrapes of the histogram. */
function serverSideSummary(before: Map<string, number>, after: Map<string, number>): string {
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  const over = (bound: string) => total - ((after.get(bound) ?? 0) - (before.get(bound) ?? 0));
  return `${total} requests; over 5 ms ${((100 * over('0.005')) / total).toFixed(2)} %, over 10 ms ${over('0.01')}, over 25 ms ${over('0.025')}, over 50 ms ${over('0.05')}`;
}
