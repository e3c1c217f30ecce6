/**
 * `npm run soak`: a bounded soak test (issue 19, item 5), not part of `npm test`. The service runs in a process of
 * its own (as in `npm run bench`) against loopback outside services and gets a steady mixed load for
 * `SOAK_MINUTES` (default 20): rule-based turns, turns with an HTTP call, turns with an LLM call, and conversation
 * starts. Every window (`SOAK_WINDOW_SECONDS`, default 60) it prints the requests, failures, latency percentiles and
 * the service's resident memory; at the end it fails (exit code 1) when a request failed or when memory or p99
 * latency trend upwards: the median of the last third of the windows against the median of the first third (the
 * first window, the warm-up, left out). See bench/README.md.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildBenchmarkAgent, deployAgent } from './agent.ts';
import { benchApi, expectStatus, type BenchApi } from './api.ts';
import {
  LOAD_CORE,
  pinThisProcess,
  residentBytes,
  SERVER_CORE,
  startPinned,
  startService,
  type BenchProcess,
} from './processes.ts';
import { openBenchStore, serviceEnvironment, type BenchStore } from './store.ts';

const number = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} is ${JSON.stringify(raw)}, expected a number > 0`);
  return value;
};

const MINUTES = number('SOAK_MINUTES', 20);
const WINDOW_SECONDS = number('SOAK_WINDOW_SECONDS', 60);
/** Requests per second offered in all (open loop: sent on a clock, not when the previous one is answered). */
const RATE = number('SOAK_RATE', 50);
/** Requests in flight at most; a request due while this many are open is counted as skipped. */
const MAX_IN_FLIGHT = 64;
/** Conversations the turns are spread over, per agent. */
const CONVERSATIONS_PER_AGENT = 32;
/**
 * The service's conversation cache (`svc.conversations.cache-size`, default 10,000) is bounded: a smaller bound,
 * full within the first window (a fifth of the requests start a conversation), makes growth after it a leak rather
 * than the cache filling up.
 */
const CACHE_SIZE = String(Math.round(number('SOAK_CACHE_SIZE', 500)));
/** Allowed growth of the last third's median over the first third's: memory, and p99 latency (plus 2 ms). */
const MAX_RSS_GROWTH = number('SOAK_MAX_RSS_GROWTH', 0.2);
const MAX_P99_GROWTH = number('SOAK_MAX_P99_GROWTH', 0.5);
const P99_SLACK_MS = 2;

type Operation = 'rule turn' | 'HTTP-call turn' | 'LLM turn' | 'start';
/** The mix, one entry per tenth of the requests. */
const MIX: readonly Operation[] = [
  'rule turn',
  'rule turn',
  'rule turn',
  'rule turn',
  'HTTP-call turn',
  'HTTP-call turn',
  'LLM turn',
  'LLM turn',
  'start',
  'start',
];
const AGENT_OF_TURN = { 'rule turn': 'rules', 'HTTP-call turn': 'httpCall', 'LLM turn': 'llm' } as const;
type AgentKind = (typeof AGENT_OF_TURN)[keyof typeof AGENT_OF_TURN];

interface Window {
  readonly latenciesMs: number[];
  readonly byOperation: Map<Operation, number>;
  failures: number;
  skipped: number;
  readonly failureSamples: string[];
}

const newWindow = (): Window => ({
  latenciesMs: [],
  byOperation: new Map(),
  failures: 0,
  skipped: 0,
  failureSamples: [],
});

interface WindowFigures {
  readonly index: number;
  readonly requests: number;
  readonly failures: number;
  readonly skipped: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly rssMiB: number;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

async function setUp(api: BenchApi, httpTarget: string, llmBaseUrl: string): Promise<Record<AgentKind, string>> {
  const agents = {
    rules: await buildBenchmarkAgent(api),
    httpCall: await buildBenchmarkAgent(api, { httpCallTarget: httpTarget }),
    llm: await buildBenchmarkAgent(api, { llmBaseUrl }),
  };
  for (const agentId of Object.values(agents)) await deployAgent(api, agentId);
  return agents;
}

async function startConversation(api: BenchApi, agentId: string): Promise<string> {
  const started = expectStatus(await api.post(`/agents/${agentId}/start`), 201, 'start');
  return started.json.conversationId as string;
}

async function main(): Promise<void> {
  const pinned = pinThisProcess(LOAD_CORE);
  const started: BenchProcess[] = [];
  let store: BenchStore | undefined;
  try {
    const helper = async (script: string) => {
      const helperProcess = await startPinned(script, {}, { core: LOAD_CORE, portVariable: 'BENCH_PORT' });
      started.push(helperProcess);
      return helperProcess;
    };
    const httpTarget = await helper('bench/echo-main.ts');
    const llm = await helper('bench/fake-openai-main.ts');
    store = await openBenchStore();
    const service = await startService(serviceEnvironment(store, { 'svc.conversations.cache-size': CACHE_SIZE }));
    started.push(service);
    const api = benchApi(service.url);
    const agents = await setUp(api, httpTarget.url, `${llm.url}/v1`);
    const conversations = {} as Record<AgentKind, string[]>;
    for (const [kind, agentId] of Object.entries(agents) as [AgentKind, string][]) {
      conversations[kind] = await Promise.all(
        Array.from({ length: CONVERSATIONS_PER_AGENT }, () => startConversation(api, agentId)),
      );
    }
    const windows = Math.max(1, Math.round((MINUTES * 60) / WINDOW_SECONDS));
    console.log(
      `soak: ${windows} windows of ${WINDOW_SECONDS} s, ${RATE} requests/s offered (40% rule turns, 20% HTTP-call turns, ` +
        `20% LLM turns, 20% conversation starts), store ${store.type}, conversation cache ${CACHE_SIZE}, ` +
        `${pinned ? `service on core ${SERVER_CORE}, load on core ${LOAD_CORE}` : 'no core pinning'}, ` +
        `node ${process.version}, ${cpus().length} CPUs`,
    );
    console.log('window  requests  failed  skipped  p50 ms  p99 ms  max ms  RSS MiB');

    let current = newWindow();
    let inFlight = 0;
    let sent = 0;
    const send = async (operation: Operation) => {
      const begin = performance.now();
      const window = current;
      let failure: string | undefined;
      try {
        if (operation === 'start') {
          const kinds = Object.keys(agents) as AgentKind[];
          const kind = kinds[sent % kinds.length]!;
          const conversationId = await startConversation(api, agents[kind]);
          conversations[kind][Math.floor(Math.random() * CONVERSATIONS_PER_AGENT)] = conversationId;
        } else {
          const pool = conversations[AGENT_OF_TURN[operation]];
          const conversationId = pool[Math.floor(Math.random() * pool.length)]!;
          const answer = await api.post(`/agents/${conversationId}`, { input: 'hello' });
          if (answer.status !== 200) failure = `${operation}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`;
          else if (answer.json?.conversationState !== 'READY')
            failure = `${operation}: ${answer.json?.conversationState} ${answer.json?.error ?? ''}`;
        }
      } catch (error) {
        failure = `${operation}: ${(error as Error).message.slice(0, 200)}`;
      }
      window.latenciesMs.push(performance.now() - begin);
      window.byOperation.set(operation, (window.byOperation.get(operation) ?? 0) + 1);
      if (failure !== undefined) {
        window.failures++;
        if (window.failureSamples.length < 3) window.failureSamples.push(failure);
      }
    };

    const figures: WindowFigures[] = [];
    const intervalMs = 1000 / RATE;
    const begin = performance.now();
    for (let index = 1; index <= windows; index++) {
      const windowEnd = begin + index * WINDOW_SECONDS * 1000;
      while (performance.now() < windowEnd) {
        const due = begin + sent * intervalMs;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const operation = MIX[sent % MIX.length]!;
        sent++;
        if (inFlight >= MAX_IN_FLIGHT) {
          current.skipped++;
          continue;
        }
        inFlight++;
        void send(operation).finally(() => inFlight--);
      }
      const done = current;
      current = newWindow();
      const sorted = [...done.latenciesMs].sort((a, b) => a - b);
      const row: WindowFigures = {
        index,
        requests: sorted.length,
        failures: done.failures,
        skipped: done.skipped,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.at(-1) ?? Number.NaN,
        rssMiB: residentBytes(service.pid) / 2 ** 20,
      };
      figures.push(row);
      console.log(
        `${String(index).padStart(6)}  ${String(row.requests).padStart(8)}  ${String(row.failures).padStart(6)}  ` +
          `${String(row.skipped).padStart(7)}  ${fixed(row.p50, 2).padStart(6)}  ${fixed(row.p99, 2).padStart(6)}  ` +
          `${fixed(row.max, 1).padStart(6)}  ${fixed(row.rssMiB).padStart(7)}`,
      );
      for (const sample of done.failureSamples) console.log(`        failed: ${sample}`);
    }
    while (inFlight > 0) await sleep(10);

    const problems = judge(figures);
    console.log(problems.length === 0 ? 'soak: passed' : `soak: FAILED\n  ${problems.join('\n  ')}`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    for (const child of started.reverse()) await child.stop();
    await store?.dispose();
  }
}

/** What speaks against the run: failures, skipped requests, memory or p99 latency trending upwards. */
function judge(figures: readonly WindowFigures[]): string[] {
  const problems: string[] = [];
  const failures = figures.reduce((sum, row) => sum + row.failures, 0);
  if (failures > 0) problems.push(`${failures} requests failed`);
  // Skipped requests (the service fell behind the offered rate) are shown, not judged: on a shared machine other
  // processes take the cores now and then.
  const measured = figures.slice(1);
  const third = Math.floor(measured.length / 3);
  if (third === 0) {
    console.log('soak: too few windows for a trend (at least 4 are needed); only failures were checked');
    return problems;
  }
  const first = measured.slice(0, third);
  const last = measured.slice(-third);
  const rssFirst = median(first.map((row) => row.rssMiB));
  const rssLast = median(last.map((row) => row.rssMiB));
  const p99First = median(first.map((row) => row.p99));
  const p99Last = median(last.map((row) => row.p99));
  console.log(
    `soak: RSS ${fixed(rssFirst)} -> ${fixed(rssLast)} MiB (allowed ${fixed(rssFirst * (1 + MAX_RSS_GROWTH))}), ` +
      `p99 ${fixed(p99First, 2)} -> ${fixed(p99Last, 2)} ms (allowed ${fixed(p99First * (1 + MAX_P99_GROWTH) + P99_SLACK_MS, 2)}), ` +
      'medians of the first and the last third of the windows after the first',
  );
  if (rssLast > rssFirst * (1 + MAX_RSS_GROWTH))
    problems.push(`memory grew from ${fixed(rssFirst)} to ${fixed(rssLast)} MiB`);
  if (p99Last > p99First * (1 + MAX_P99_GROWTH) + P99_SLACK_MS)
    problems.push(`p99 latency grew from ${fixed(p99First, 2)} to ${fixed(p99Last, 2)} ms`);
  return problems;
}

await main();
