/**
 * `npm run bench`: the service's workloads, each measured against a bare `node:http` echo server in the same
 * run, reported as ratios (absolute figures on shared machines are noise). See bench/README.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { setTimeout } from 'node:timers/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type RunningServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';
import { buildBenchmarkAgent, deployAgent } from './agent.ts';
import { benchApi, expectStatus, type BenchApi } from './api.ts';
import { startEchoServer, type EchoServer } from './echo.ts';
import { knowledgeWorkload, printKnowledge } from './knowledge.ts';
import { measure, measurementProblem, type LoadSpec, type Measurement } from './measure.ts';
import { openBenchStore, type BenchStore } from './store.ts';

const resultsFile = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');

const MESSAGE = JSON.stringify({ input: 'hello' });
const STEP_CONVERSATIONS = 64;
const STEP_CONNECTIONS = 16;
const START_CONNECTIONS = 8;
const DEPTH_MESSAGES = 200;
const DEPTH_SHALLOW = 10;
const DEPTH_DEEP = 1000;
const DEPTH_WARMUP = 50;
const SETTLE_MS = 500;

interface Comparison {
  readonly connections: number;
  readonly echo: Measurement;
  readonly service: Measurement;
  /** service req/s ÷ echo req/s (1 = as fast as the echo server). */
  readonly ratio: number;
  /** service latency ÷ echo latency (1 = as fast as the echo server). */
  readonly latencyRatio: { readonly mean: number; readonly p50: number; readonly p99: number };
}

function durationSetting(): number {
  const raw = process.env.BENCH_DURATION;
  if (raw === undefined || raw.trim() === '') return 5;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`BENCH_DURATION is ${JSON.stringify(raw)}, expected a positive number of seconds`);
  return value;
}

const problems: string[] = [];

/** Measures the echo server, then the service, under the same load; the path function gets the target. */
async function compare(
  name: string,
  echo: EchoServer,
  service: RunningServer,
  spec: Omit<LoadSpec, 'path'> & { path: (target: 'echo' | 'service') => LoadSpec['path'] },
): Promise<Comparison> {
  const run = async (target: 'echo' | 'service', url: string) => {
    const measurement = await measure(url, { ...spec, path: spec.path(target) });
    const problem = measurementProblem(measurement);
    if (problem !== undefined) problems.push(`${name} (${target}): ${problem}`);
    return measurement;
  };
  const echoRun = await run('echo', echo.url);
  const serviceRun = await run('service', service.url);
  return {
    connections: spec.connections,
    echo: echoRun,
    service: serviceRun,
    ratio: serviceRun.reqPerSec / echoRun.reqPerSec,
    latencyRatio: {
      mean: serviceRun.latencyMs.mean / echoRun.latencyMs.mean,
      p50: serviceRun.latencyMs.p50 / echoRun.latencyMs.p50,
      p99: serviceRun.latencyMs.p99 / echoRun.latencyMs.p99,
    },
  };
}

async function startConversation(api: BenchApi, agentId: string): Promise<string> {
  const answer = expectStatus(await api.post(`/agents/${agentId}/start`), 201, 'start a conversation');
  return answer.json.conversationId as string;
}

async function say(api: BenchApi, conversationId: string): Promise<void> {
  expectStatus(await api.post(`/agents/${conversationId}`, { input: 'hello' }), 200, 'send a message');
}

async function stepCount(api: BenchApi, conversationId: string): Promise<number> {
  const answer = expectStatus(
    await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`),
    200,
    'read a conversation',
  );
  return (answer.json.conversationSteps as unknown[]).length;
}

/** 1. Messages spread round-robin over 64 conversations started beforehand. */
async function stepThroughput(
  api: BenchApi,
  agentId: string,
  echo: EchoServer,
  service: RunningServer,
  duration: number,
  warmupSeconds: number,
) {
  const ids: string[] = [];
  for (let n = 0; n < STEP_CONVERSATIONS; n++) ids.push(await startConversation(api, agentId));
  const roundRobin = () => {
    let next = 0;
    return () => `/agents/${ids[next++ % ids.length]}`;
  };
  const comparison = await compare('step-throughput', echo, service, {
    connections: STEP_CONNECTIONS,
    duration,
    warmupSeconds,
    body: MESSAGE,
    path: () => roundRobin(),
  });
  return { conversations: STEP_CONVERSATIONS, ...comparison };
}

/** 2. Conversation starts (step 0 with CONVERSATION_START, answered 201 with the whole conversation). */
async function startRate(
  agentId: string,
  echo: EchoServer,
  service: RunningServer,
  duration: number,
  warmupSeconds: number,
) {
  return compare('start-rate', echo, service, {
    connections: START_CONNECTIONS,
    duration,
    warmupSeconds,
    path: () => `/agents/${agentId}/start`,
  });
}

/** 3. One conversation, one connection: 200 messages at step ~10, then again at step ~1000. */
async function stepCostAtDepth(api: BenchApi, agentId: string, echo: EchoServer, service: RunningServer) {
  const id = await startConversation(api, agentId);
  const driveTo = async (steps: number) => {
    let current = await stepCount(api, id);
    for (; current < steps; current++) await say(api, id);
    return current;
  };
  // Warms both servers on the one-connection path without moving the measured conversation.
  const scratch = await startConversation(api, agentId);
  const warmUp = async () => {
    await measure(echo.url, { connections: 1, amount: DEPTH_WARMUP, body: MESSAGE, path: `/agents/${scratch}` });
    await measure(service.url, { connections: 1, amount: DEPTH_WARMUP, body: MESSAGE, path: `/agents/${scratch}` });
  };
  const phase = async (name: string, atStep: number) => {
    const fromStep = await driveTo(atStep);
    await warmUp();
    // 200 one-connection messages take a fraction of a second: let deferred work of the earlier load (garbage
    // collection, WAL checkpoints) finish first so it does not land inside the window.
    await setTimeout(SETTLE_MS);
    const comparison = await compare(name, echo, service, {
      connections: 1,
      amount: DEPTH_MESSAGES,
      body: MESSAGE,
      path: () => `/agents/${id}`,
    });
    return { fromStep, toStep: await stepCount(api, id), ...comparison };
  };
  const shallow = await phase(`step-cost-at-depth step${DEPTH_SHALLOW}`, DEPTH_SHALLOW);
  const deep = await phase(`step-cost-at-depth step${DEPTH_DEEP}`, DEPTH_DEEP);
  return {
    connections: 1,
    messages: DEPTH_MESSAGES,
    step10: shallow,
    step1000: deep,
    /** Mean service latency at step 1000 ÷ at step 10: 1 = a turn costs the same however long the conversation. */
    latencyRatioDeepOverShallow: deep.service.latencyMs.mean / shallow.service.latencyMs.mean,
    /** The same with medians, less sensitive to a single pause inside the short window. */
    p50RatioDeepOverShallow: deep.service.latencyMs.p50 / shallow.service.latencyMs.p50,
    /** The same for the echo server: how much the machine itself drifted between the two phases. */
    echoDriftDeepOverShallow: deep.echo.latencyMs.mean / shallow.echo.latencyMs.mean,
  };
}

/**
 * 4. `httpcall-step`: the step-throughput load against the same agent plus one HTTP call per turn (to a loopback
 * target started by the bench, a second echo server, closed only after the service so that turns still queued
 * when the measurement ends find it). Reported against the echo server and against the
 * `step-throughput` figure of the same run (1 = the call costs nothing).
 */
async function httpCallStep(
  api: BenchApi,
  target: EchoServer,
  echo: EchoServer,
  service: RunningServer,
  steps: Comparison,
  duration: number,
  warmupSeconds: number,
) {
  const agentId = await buildBenchmarkAgent(api, { httpCallTarget: target.url });
  await deployAgent(api, agentId);
  const ids: string[] = [];
  for (let n = 0; n < STEP_CONVERSATIONS; n++) ids.push(await startConversation(api, agentId));
  const roundRobin = () => {
    let next = 0;
    return () => `/agents/${ids[next++ % ids.length]}`;
  };
  const comparison = await compare('httpcall-step', echo, service, {
    connections: STEP_CONNECTIONS,
    duration,
    warmupSeconds,
    body: MESSAGE,
    path: () => roundRobin(),
  });
  return {
    conversations: STEP_CONVERSATIONS,
    ...comparison,
    /** httpcall-step service req/s ÷ step-throughput service req/s of this run. */
    ratioToStepThroughput: comparison.service.reqPerSec / steps.service.reqPerSec,
  };
}

// ---------------------------------------------------------------------------------------------------------------

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function printTable(rows: { name: string; comparison: Comparison }[]): void {
  const header = [
    'workload',
    'conns',
    'echo req/s',
    'svc req/s',
    'ratio',
    'echo p50 ms',
    'svc p50 ms',
    'p50 x',
    'echo p99 ms',
    'svc p99 ms',
    'p99 x',
    'svc mean ms',
    'mean x',
  ];
  const lines = rows.map(({ name, comparison: c }) => [
    name,
    String(c.connections),
    fixed(c.echo.reqPerSec, 0),
    fixed(c.service.reqPerSec, 0),
    fixed(c.ratio, 3),
    fixed(c.echo.latencyMs.p50, 3),
    fixed(c.service.latencyMs.p50, 3),
    fixed(c.latencyRatio.p50, 2),
    fixed(c.echo.latencyMs.p99, 3),
    fixed(c.service.latencyMs.p99, 3),
    fixed(c.latencyRatio.p99, 2),
    fixed(c.service.latencyMs.mean, 3),
    fixed(c.latencyRatio.mean, 2),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}

const round = (_key: string, value: unknown) =>
  typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value;

async function main(): Promise<void> {
  const duration = durationSetting();
  const warmupSeconds = Math.min(1, duration / 5);
  const began = performance.now();
  let store: BenchStore | undefined;
  let echo: EchoServer | undefined;
  let httpCallTarget: EchoServer | undefined;
  let service: RunningServer | undefined;
  try {
    store = await openBenchStore();
    echo = await startEchoServer();
    service = await startServer(
      loadSettings(
        {},
        { 'svc.http.port': 0, 'svc.http.host': '127.0.0.1', 'svc.log.level': 'warn', ...store.settings },
      ),
      { logDestination: process.stderr },
    );
    const api = benchApi(service.url);
    const agentId = await buildBenchmarkAgent(api);
    await deployAgent(api, agentId);
    console.log(
      `bench: store ${store.type}, ${duration} s per measurement (+${warmupSeconds} s warm-up), node ${process.version}, ${availableParallelism()} CPUs`,
    );

    console.log('bench: step-throughput ...');
    const steps = await stepThroughput(api, agentId, echo, service, duration, warmupSeconds);
    console.log('bench: start-rate ...');
    const starts = await startRate(agentId, echo, service, duration, warmupSeconds);
    console.log('bench: step-cost-at-depth ...');
    const depth = await stepCostAtDepth(api, agentId, echo, service);
    const { step10: shallow, step1000: deep } = depth;
    console.log('bench: httpcall-step ...');
    httpCallTarget = await startEchoServer();
    const httpCalls = await httpCallStep(api, httpCallTarget, echo, service, steps, duration, warmupSeconds);
    console.log('bench: knowledge (ingestion, search at 100k chunks) ...');
    const knowledge = await knowledgeWorkload(api, store.settings, duration);

    console.log('');
    printTable([
      { name: 'step-throughput', comparison: steps },
      { name: 'start-rate', comparison: starts },
      { name: `step-cost-at-depth @${shallow.fromStep}`, comparison: shallow },
      { name: `step-cost-at-depth @${deep.fromStep}`, comparison: deep },
      { name: 'httpcall-step', comparison: httpCalls },
    ]);
    console.log('');
    console.log(`step-throughput ratio (service/echo req/s):         ${fixed(steps.ratio, 3)}`);
    console.log(`start-rate ratio (service/echo req/s):              ${fixed(starts.ratio, 3)}`);
    console.log(
      `httpcall-step ratio (service/echo req/s):           ${fixed(httpCalls.ratio, 3)} (to step-throughput: ${fixed(httpCalls.ratioToStepThroughput, 3)})`,
    );
    console.log(
      `step-cost-at-depth latency ratio step${DEPTH_DEEP}/step${DEPTH_SHALLOW}: ${fixed(depth.latencyRatioDeepOverShallow, 3)} (p50 ${fixed(depth.p50RatioDeepOverShallow, 3)}; echo drift ${fixed(depth.echoDriftDeepOverShallow, 3)})`,
    );
    printKnowledge(knowledge);

    const summary = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      store: store.type,
      durationSeconds: duration,
      warmupSeconds,
      workloads: {
        'step-throughput': steps,
        'start-rate': starts,
        'step-cost-at-depth': depth,
        'httpcall-step': httpCalls,
        knowledge,
      },
      ratios: {
        'step-throughput': steps.ratio,
        'start-rate': starts.ratio,
        'step-cost-at-depth': depth.latencyRatioDeepOverShallow,
        'httpcall-step': httpCalls.ratio,
        'httpcall-step/step-throughput': httpCalls.ratioToStepThroughput,
      },
      problems,
      elapsedSeconds: (performance.now() - began) / 1000,
    };
    const json = JSON.stringify(summary, round, 2);
    await mkdir(dirname(resultsFile), { recursive: true });
    await writeFile(resultsFile, `${json}\n`);
    console.log('');
    console.log(json);
    console.log(`\nbench: written to ${resultsFile}`);
    if (problems.length > 0) {
      console.error(`bench: ${problems.length} measurement(s) had failed requests:\n  ${problems.join('\n  ')}`);
      process.exitCode = 1;
    }
  } finally {
    await service?.close();
    await httpCallTarget?.close();
    await echo?.close();
    await store?.dispose();
  }
}

try {
  await main();
} catch (error) {
  console.error('bench: failed:', error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
}
