/**
 * `npm run bench`: the service measured as a user measures it. The service runs in a process of its own on core 0,
 * the load generator (wrk, or autocannon in a child process) on core 1, and every workload is compared with a bare
 * `node:http` echo server on the same core under the same load, in the same run. Each goal of issue 15 is printed
 * beside its target, and the figures that have none (knowledge bases) below them. See bench/README.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentOn, DICTIONARY_WORDS, LLM_HISTORY_MESSAGES, RULES, startConversations } from './agent.ts';
import { benchApi, expectStatus, type BenchApi } from './api.ts';
import { cpuSeconds } from './cpu.ts';
import { knowledgeWorkload } from './knowledge.ts';
import { memoryOfConversations } from './memory.ts';
import { generator, runLoad } from './load.ts';
import { measurementProblem, type LoadSpec, type Measurement } from './measure.ts';
import { openAiChatBodies } from './openai.ts';
import { LOAD_CORE, pinThisProcess, SERVER_CORE, startPinned, startService, type BenchProcess } from './processes.ts';
import { openBenchStore, serviceEnvironment, type BenchStore } from './store.ts';

const resultsFile = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');

const MESSAGE = JSON.stringify({ input: 'hello' });
const CONVERSATIONS = 64;
const CONNECTIONS = 16;
const START_CONNECTIONS = 8;
const DEPTH_MESSAGES = 400;
const DEPTH_SHALLOW = 10;
const DEPTH_DEEP = 1000;
const DEPTH_WARMUP = 300;
const DEPTH_ROUNDS = 4;

function numberSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} is ${JSON.stringify(raw)}, expected a number`);
  return value;
}

const duration = numberSetting('BENCH_DURATION', 5);
const latencySeconds = numberSetting('BENCH_LATENCY_SECONDS', 30);
const memoryConversations = numberSetting('BENCH_MEMORY_CONVERSATIONS', 100_000);
const warmupSeconds = 1;
/**
 * W1 is the first load a fresh service gets: its CPU a turn falls over its first ~15 s of load (the JIT's tiers, the
 * heap growing to its working size), by a third in some runs. W1 is measured after this much load, the echo too.
 */
const freshServiceWarmupSeconds = 10;

/** One measured figure against its goal. */
interface Goal {
  readonly name: string;
  readonly figure: number;
  readonly target: string;
  readonly met: boolean;
  readonly detail: string;
}

/** A measured figure the issues ask for without a target. */
interface Figure {
  readonly name: string;
  readonly figure: number;
  readonly detail: string;
}

const goals: Goal[] = [];
const figures: Figure[] = [];
const problems: string[] = [];
const workloads: Record<string, unknown> = {};

function atLeast(name: string, figure: number, target: number, detail: string): void {
  goals.push({ name, figure, target: `>= ${target}`, met: figure >= target, detail });
}
function atMost(name: string, figure: number, target: number, detail: string): void {
  goals.push({ name, figure, target: `<= ${target}`, met: figure <= target, detail });
}

function figure(name: string, value: number, detail: string): void {
  figures.push({ name, figure: value, detail });
}

/** A load run against one process, with the CPU time that process spent on it. */
interface Run extends Measurement {
  /** Microseconds of the server process's CPU per answered request (steady on a shared machine). */
  readonly cpuMicrosPerRequest: number;
}

async function load(target: BenchProcess, spec: LoadSpec, name: string): Promise<Run> {
  if (spec.warmupSeconds) await runLoad(target.url, { ...spec, duration: spec.warmupSeconds, warmupSeconds: 0 });
  const before = cpuSeconds(target.pid);
  const measurement = await runLoad(target.url, { ...spec, warmupSeconds: 0 });
  const after = cpuSeconds(target.pid);
  const problem = measurementProblem(measurement);
  if (problem !== undefined) problems.push(`${name}: ${problem}`);
  const cpu = before === undefined || after === undefined ? Number.NaN : after - before;
  return { ...measurement, cpuMicrosPerRequest: (cpu * 1e6) / measurement.requests };
}

/** The same load against the echo server and the service: req/s and CPU per request as ratios. */
async function compared(echo: BenchProcess, service: BenchProcess, spec: LoadSpec, name: string) {
  const baseline = await load(echo, { ...spec, paths: ['/echo'] }, `${name} (echo)`);
  const measured = await load(service, spec, name);
  return {
    echo: baseline,
    service: measured,
    ratio: measured.reqPerSec / baseline.reqPerSec,
    cpuRatio: baseline.cpuMicrosPerRequest / measured.cpuMicrosPerRequest,
  };
}

const steps = (paths: readonly string[], warmup = warmupSeconds): LoadSpec => ({
  connections: CONNECTIONS,
  duration,
  warmupSeconds: warmup,
  body: MESSAGE,
  paths,
});

const fixed = (value: number, digits = 3) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const pinned = pinThisProcess(LOAD_CORE);
  const started: BenchProcess[] = [];
  const stores: BenchStore[] = [];
  const begin = performance.now();
  try {
    const helper = async (script: string, core: number) => {
      const process_ = await startPinned(script, {}, { core, portVariable: 'BENCH_PORT' });
      started.push(process_);
      return process_;
    };
    const echo = await helper('bench/echo-main.ts', SERVER_CORE);
    // Outside services (the HTTP-call target, the LLM provider) run beside the load generator, not on the
    // service's core: their cost is theirs, not the service's.
    const httpTarget = await helper('bench/echo-main.ts', LOAD_CORE);
    const llm = await helper('bench/fake-openai-main.ts', LOAD_CORE);

    const store = await openBenchStore();
    stores.push(store);
    const service = await startService(serviceEnvironment(store));
    started.push(service);
    const api = benchApi(service.url);
    console.log(
      `bench: store ${store.type}, ${duration} s per measurement (+${warmupSeconds} s warm-up, ${freshServiceWarmupSeconds} s before W1), load generator ${generator}, ` +
        `${pinned ? `service and echo on core ${SERVER_CORE}, load on core ${LOAD_CORE}` : 'no core pinning (taskset missing)'}, ` +
        `node ${process.version}, ${cpus().length} CPUs; agent: ${DICTIONARY_WORDS} words, ${RULES} rules`,
    );

    console.log('bench: W1 rule-only turns ...');
    const rules = await agentOn(api, CONVERSATIONS);
    const w1 = await compared(echo, service, steps(rules.paths, freshServiceWarmupSeconds), 'W1');
    workloads.W1 = w1;
    atLeast(
      'W1 rule-only turn throughput (÷ echo req/s)',
      w1.ratio,
      0.25,
      `${fixed(w1.service.reqPerSec, 0)} turns/s vs echo ${fixed(w1.echo.reqPerSec, 0)}; CPU per turn ${fixed(w1.service.cpuMicrosPerRequest, 0)} µs vs ${fixed(w1.echo.cpuMicrosPerRequest, 1)} µs per echo (CPU ratio ${fixed(w1.cpuRatio)})`,
    );

    console.log('bench: W1 through the OpenAI-compatible API ...');
    const chats = await openAiChatBodies(api, rules.agentId, CONVERSATIONS);
    const openAi = await load(
      service,
      { connections: CONNECTIONS, duration, warmupSeconds, paths: ['/v1/chat/completions'], bodies: chats },
      'OpenAI-compatible turn',
    );
    workloads['openai-chat'] = openAi;
    atLeast(
      'OpenAI-compatible turn (÷ W1 rule-only turn req/s)',
      openAi.reqPerSec / w1.service.reqPerSec,
      0.8,
      `${fixed(openAi.reqPerSec, 0)} turns/s; CPU per turn ${fixed(openAi.cpuMicrosPerRequest, 0)} µs vs ${fixed(w1.service.cpuMicrosPerRequest, 0)} µs native`,
    );

    console.log(`bench: latency at half of W1's throughput for ${latencySeconds} s ...`);
    const rate = Math.max(1, Math.round(w1.service.reqPerSec / 2));
    const paced = await load(
      service,
      { connections: CONNECTIONS, duration: latencySeconds, body: MESSAGE, paths: rules.paths, rate },
      'latency',
    );
    // The same paced load against the echo server: the load generator's own latency floor on this machine.
    const pacedEcho = await load(
      echo,
      { connections: CONNECTIONS, duration: latencySeconds, body: MESSAGE, paths: ['/echo'], rate },
      'latency (echo)',
    );
    workloads.latency = { rate, ...paced, echo: pacedEcho };
    const floor = (figure: 'p99' | 'max') =>
      `the echo under the same load: ${fixed(pacedEcho.latencyMs[figure], 1)} ms`;
    atMost(
      'Latency p99 at half W1 (ms)',
      paced.latencyMs.p99,
      5,
      `${rate} turns/s asked for ${latencySeconds} s, ${fixed(paced.reqPerSec, 0)} served; p50 ${fixed(paced.latencyMs.p50, 1)} ms; ${floor('p99')}`,
    );
    atMost('Latency max at half W1 (ms)', paced.latencyMs.max, 50, `${paced.requests} turns; ${floor('max')}`);

    console.log('bench: W2 conversation starts ...');
    const w2 = await compared(
      echo,
      service,
      { connections: START_CONNECTIONS, duration, warmupSeconds, paths: [`/agents/${rules.agentId}/start`] },
      'W2',
    );
    workloads.W2 = w2;
    atLeast(
      'W2 conversation starts (÷ echo req/s)',
      w2.ratio,
      0.2,
      `${fixed(w2.service.reqPerSec, 0)} starts/s; CPU ratio ${fixed(w2.cpuRatio)}`,
    );

    console.log('bench: W3 step cost at depth ...');
    const w3 = await stepCostAtDepth(api, service, rules.agentId);
    workloads.W3 = w3;
    atMost(
      'W3 turn at step 1000 ÷ turn at step 10 (CPU per turn)',
      w3.cpuRatioDeepOverShallow,
      1.1,
      `cheapest of ${w3.rounds} alternating rounds each; mean latency ratio ${fixed(w3.latencyRatioDeepOverShallow)}`,
    );

    console.log('bench: HTTP-call turns ...');
    const calling = await agentOn(api, CONVERSATIONS, { httpCallTarget: httpTarget.url });
    // The rule-only turn again right before, on the service as the earlier workloads left it: W1 was measured
    // minutes before, and this machine's speed drifts more than that between the two (one ratio, one moment).
    const rulesBefore = await load(service, steps(rules.paths), 'W1 before the HTTP-call turn');
    const withCall = await load(service, steps(calling.paths), 'httpcall');
    workloads.httpcall = { ...withCall, rulesBefore };
    atLeast(
      'HTTP-call turn (÷ rule-only turn req/s)',
      withCall.reqPerSec / rulesBefore.reqPerSec,
      0.6,
      `${fixed(withCall.reqPerSec, 0)} turns/s vs ${fixed(rulesBefore.reqPerSec, 0)} rule-only turns/s measured just before (W1: ${fixed(w1.service.reqPerSec, 0)}); CPU per turn ${fixed(withCall.cpuMicrosPerRequest, 0)} µs vs ${fixed(rulesBefore.cpuMicrosPerRequest, 0)} µs`,
    );

    console.log('bench: LLM turns ...');
    const provider = await load(
      llm,
      { ...steps(['/v1/chat/completions']), body: JSON.stringify({ model: 'gpt-bench', messages: [] }) },
      'LLM provider alone',
    );
    const chatting = await agentOn(api, CONVERSATIONS, { llmBaseUrl: `${llm.url}/v1` });
    const llmTurns = await load(service, steps(chatting.paths), 'LLM turn');
    workloads.llm = { provider, service: llmTurns, historyMessages: LLM_HISTORY_MESSAGES };
    atLeast(
      'LLM turn (÷ the fake provider alone req/s)',
      llmTurns.reqPerSec / provider.reqPerSec,
      0.25,
      `${fixed(llmTurns.reqPerSec, 0)} turns/s vs provider ${fixed(provider.reqPerSec, 0)}; CPU per turn ${fixed(llmTurns.cpuMicrosPerRequest, 0)} µs`,
    );
    atMost(
      'LLM turn p99 at 16 connections (ms)',
      llmTurns.latencyMs.p99,
      10,
      `mean ${fixed(llmTurns.latencyMs.mean)} ms`,
    );

    console.log('bench: knowledge bases (ingestion, search at 100,000 chunks) ...');
    const knowledge = await knowledgeWorkload(api, store.settings, duration, (spec) =>
      load(service, spec, 'knowledge search'),
    );
    workloads.knowledge = knowledge;
    const { ingestion, search } = knowledge;
    figure(
      'Knowledge ingestion (chunks/s)',
      ingestion.chunksPerSec,
      `${fixed(ingestion.documentsPerSec, 0)} documents/s; ${ingestion.documents} documents, ${ingestion.chunks} chunks through the REST API, embedded on a loopback server`,
    );
    figure(
      `Knowledge search p99 at ${search.chunks} chunks (ms)`,
      search.rest.latencyMs.p99,
      `REST through the approximate index, one at a time: p50 ${fixed(search.rest.latencyMs.p50, 1)} ms, ${fixed(search.rest.reqPerSec, 0)} searches/s, recall@${search.k} ${fixed(search.recallAtK)}; exact (before it was built) p50 ${fixed(search.exactRestMs.p50, 1)} ms, p99 ${fixed(search.exactRestMs.p99, 1)} ms, recall@${search.k} ${fixed(search.exactRecallAtK)}; exact index alone p50 ${fixed(search.indexMs.p50, 1)} ms; first search ${fixed(search.firstSearchMs, 0)} ms, approximate index ready after ${fixed(search.approximateBuildMs / 1000, 1)} s; after one more document ${fixed(search.searchAfterIngestMs, 1)} ms`,
    );

    await service.stop();
    if (memoryConversations > 0) await memoryGoal();
    await signedW1(echo, w1.service);
    await postgresW1(echo);
  } finally {
    for (const process_ of started.reverse()) await process_.stop();
    for (const store of stores) await store.dispose();
  }
  report((performance.now() - begin) / 1000);
}

/** The memory goal: RSS a fresh service adds while `memoryConversations` conversations are used once each. */
async function memoryGoal(): Promise<void> {
  console.log(`bench: memory of ${memoryConversations} conversations used once (a fresh service) ...`);
  const memory = await memoryOfConversations(memoryConversations, load);
  workloads.memory = memory;
  const { before, after } = memory;
  atMost(
    `Memory added by ${memoryConversations} conversations (MiB RSS)`,
    memory.addedMiB,
    300,
    `RSS ${fixed(memory.rssBeforeMiB, 0)} MiB before, ${fixed(memory.rssAfterMiB, 0)} MiB after; V8 heap ${fixed(before.heapTotalMiB, 0)} → ${fixed(after.heapTotalMiB, 0)} MiB (${fixed(after.heapUsedMiB, 0)} used)`,
  );
}

/**
 * W1 again on a fresh service with a vault master key, so that the audit ledger signs its entries, as it does in any
 * deployment that keeps secrets (the goals are measured unsigned): a figure beside the unsigned W1's CPU a turn.
 */
async function signedW1(echo: BenchProcess, unsigned: Run): Promise<void> {
  console.log('bench: W1 with signed audit entries ...');
  const w1 = await freshServiceW1(echo, await openBenchStore(), 'W1 signed', {
    'svc.vault.master-key': 'bench-signed-master-key',
  });
  workloads['W1-signed'] = w1;
  figure(
    'W1 with signed audit entries (÷ echo req/s)',
    w1.ratio,
    `${fixed(w1.service.reqPerSec, 0)} turns/s; CPU per turn ${fixed(w1.service.cpuMicrosPerRequest, 0)} µs signed vs ${fixed(unsigned.cpuMicrosPerRequest, 0)} µs unsigned (W1)`,
  );
}

/** W1 again with the service on PostgreSQL (skipped, and said so, when no PostgreSQL answers). */
async function postgresW1(echo: BenchProcess): Promise<void> {
  let store: BenchStore;
  try {
    store = await openBenchStore({ ...process.env, BENCH_STORE: 'postgres' });
  } catch (error) {
    problems.push(`PostgreSQL W1 skipped: ${(error as Error).message}`);
    return;
  }
  console.log('bench: W1 on PostgreSQL ...');
  const w1 = await freshServiceW1(echo, store, 'W1 PostgreSQL');
  workloads['W1-postgres'] = w1;
  atLeast(
    'W1 on PostgreSQL (÷ echo req/s)',
    w1.ratio,
    0.1,
    `${fixed(w1.service.reqPerSec, 0)} turns/s; CPU per turn ${fixed(w1.service.cpuMicrosPerRequest, 0)} µs in the service (PostgreSQL's own not counted)`,
  );
}

/** W1 on a fresh service over `store` (with `extra` settings), stopped and its store disposed of afterwards. */
async function freshServiceW1(
  echo: BenchProcess,
  store: BenchStore,
  name: string,
  extra: Parameters<typeof serviceEnvironment>[1] = {},
) {
  let service: BenchProcess | undefined;
  try {
    service = await startService(serviceEnvironment(store, extra));
    const rules = await agentOn(benchApi(service.url), CONVERSATIONS);
    return await compared(echo, service, steps(rules.paths, freshServiceWarmupSeconds), name);
  } finally {
    await service?.stop();
    await store.dispose();
  }
}

/**
 * One connection: CPU per turn at step ~10 and from step 1000 on, in alternating rounds of `DEPTH_MESSAGES` turns so
 * that both see the same background work (audit flushes, checkpoints, other processes on the machine). Each shallow
 * round runs on a fresh conversation driven to step 10; the deep rounds go on with one conversation driven to step
 * 1000 (it ends near step 1000 + rounds × `DEPTH_MESSAGES`). The cheapest round of each is compared.
 */
async function stepCostAtDepth(api: BenchApi, service: BenchProcess, agentId: string) {
  const drive = async (conversationId: string, turns: number) => {
    const path = `/agents/${conversationId}`;
    for (let n = 0; n < turns; n++) expectStatus(await api.post(path, { input: 'hello' }), 200, 'send a message');
  };
  const measure = (conversationId: string, name: string) =>
    load(
      service,
      { connections: 1, amount: DEPTH_MESSAGES, body: MESSAGE, paths: [`/agents/${conversationId}`] },
      name,
    );
  const [deep] = await startConversations(api, agentId, 1);
  await drive(deep!, DEPTH_DEEP - 1);
  // Warms the one-connection path (and the JIT) on a scratch conversation, so both kinds of round run the same code.
  const [scratch] = await startConversations(api, agentId, 1);
  await runLoad(service.url, { connections: 1, amount: DEPTH_WARMUP, body: MESSAGE, paths: [`/agents/${scratch}`] });
  const shallowRounds: Run[] = [];
  const deepRounds: Run[] = [];
  for (let round = 0; round < DEPTH_ROUNDS; round++) {
    const [shallow] = await startConversations(api, agentId, 1);
    await drive(shallow!, DEPTH_SHALLOW - 1);
    shallowRounds.push(await measure(shallow!, `W3 at step ${DEPTH_SHALLOW}`));
    deepRounds.push(await measure(deep!, `W3 from step ${DEPTH_DEEP}`));
  }
  const least = (rounds: Run[], figure: (run: Run) => number) => Math.min(...rounds.map(figure));
  const cpu = (run: Run) => run.cpuMicrosPerRequest;
  const latency = (run: Run) => run.latencyMs.mean;
  return {
    rounds: DEPTH_ROUNDS,
    step10: shallowRounds,
    step1000: deepRounds,
    cpuRatioDeepOverShallow: least(deepRounds, cpu) / least(shallowRounds, cpu),
    latencyRatioDeepOverShallow: least(deepRounds, latency) / least(shallowRounds, latency),
  };
}

function report(elapsedSeconds: number): void {
  const rows = goals.map((goal) => [
    goal.met ? 'met' : 'MISSED',
    goal.name,
    fixed(goal.figure),
    goal.target,
    goal.detail,
  ]);
  const widths = [6, ...[1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length)))];
  rows.push(...figures.map((row) => ['figure', row.name, fixed(row.figure), '', row.detail]));
  console.log('');
  for (const row of rows) {
    console.log(
      `${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]!.padStart(widths[2]!)}  ${row[3]!.padEnd(widths[3]!)}  ${row[4]}`,
    );
  }
  const summary = {
    generatedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadGenerator: generator,
    durationSeconds: duration,
    goals,
    figures,
    workloads,
    problems,
    elapsedSeconds,
  };
  void mkdir(dirname(resultsFile), { recursive: true }).then(() =>
    writeFile(resultsFile, `${JSON.stringify(summary, null, 2)}\n`),
  );
  console.log(
    `\nbench: ${goals.filter((goal) => goal.met).length} of ${goals.length} goals met; JSON in ${resultsFile}`,
  );
  if (problems.length > 0) {
    console.error(`bench: problems:\n  ${problems.join('\n  ')}`);
    if (problems.some((problem) => !problem.startsWith('PostgreSQL W1 skipped'))) process.exitCode = 1;
  }
}

try {
  await main();
} catch (error) {
  console.error('bench: failed:', error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
}
