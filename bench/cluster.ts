import { deployAgent, buildBenchmarkAgent } from './agent.ts';
import { benchApi, expectStatus, idFromLocation } from './api.ts';
import { startEchoServer } from './echo.ts';
import { measure, measurementProblem, type Measurement } from './measure.ts';
import { openBenchStore } from './store.ts';
import { startServiceProcess, type ServiceProcess } from '../test/support/process.ts';

/**
 * `npm run bench:cluster`: the rule-only step workload (the benchmark agent: 10,000 words, 500 rules) on one
 * service process, then on two processes sharing the same PostgreSQL database, with the same total number of
 * connections; both reported as ratios to a bare node:http echo measured in the same run. The load generator
 * runs in this process, so on a 2-core machine three processes and PostgreSQL share the cores: read the
 * two-instance figure as "turns stay correct and throughput holds", not as linear scaling.
 */

const CONNECTIONS = 16;
const CONVERSATIONS = 64;
const duration = Number(process.env.BENCH_DURATION ?? 5);

async function main(): Promise<void> {
  process.env.BENCH_STORE = 'postgres';
  const store = await openBenchStore();
  const instances: ServiceProcess[] = [];
  const echo = await startEchoServer();
  try {
    const start = async () => {
      const env = Object.fromEntries(
        Object.entries(store.settings).map(([name, value]) => [
          name.toUpperCase().replace(/[.-]/g, '_'),
          String(value),
        ]),
      );
      const instance = startServiceProcess({ ...env, SVC_HTTP_PORT: '0', SVC_LOG_LEVEL: 'info' });
      instances.push(instance);
      return instance.listening();
    };
    const first = await start();
    const api = benchApi(first);
    const agentId = await buildBenchmarkAgent(api);
    await deployAgent(api, agentId);
    const conversations: string[] = [];
    for (let n = 0; n < CONVERSATIONS; n++) {
      conversations.push(
        idFromLocation(expectStatus(await api.post(`/agents/${agentId}/start`), 201, 'start').headers.get('location')),
      );
    }
    const paths = conversations.map((id) => `/agents/${id}`);
    const body = JSON.stringify({ input: 'hello' });

    const echoRun = await measure(echo.url, {
      connections: CONNECTIONS,
      duration,
      warmupSeconds: 1,
      paths: ['/'],
      body,
    });
    const one = await measure(first, { connections: CONNECTIONS, duration, warmupSeconds: 1, paths, body });

    const second = await start();
    // The second instance learns about the deployment by notification or at start-up; wait until it can answer.
    for (let tries = 0; tries < 100; tries++) {
      const status = await benchApi(second).get(`/administration/production/deploymentstatus/${agentId}?version=1`);
      if (status.json?.status === 'READY') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [a, b] = await Promise.all([
      measure(first, { connections: CONNECTIONS / 2, duration, warmupSeconds: 1, paths, body }),
      measure(second, { connections: CONNECTIONS / 2, duration, warmupSeconds: 1, paths, body }),
    ]);
    const problems = [echoRun, one, a, b].map(measurementProblem).filter(Boolean);
    const two = a.reqPerSec + b.reqPerSec;
    const report = {
      store: 'postgres',
      connections: CONNECTIONS,
      conversations: CONVERSATIONS,
      durationSeconds: duration,
      echoReqPerSec: round(echoRun.reqPerSec),
      oneInstance: summary(one, echoRun),
      twoInstances: {
        reqPerSec: round(two),
        ratioToEcho: round(two / echoRun.reqPerSec, 3),
        perInstance: [summary(a, echoRun), summary(b, echoRun)],
      },
      twoOverOne: round(two / one.reqPerSec, 3),
      problems,
    };
    console.log(JSON.stringify(report, null, 2));
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
    await echo.close();
    await store.dispose();
  }
}

function summary(run: Measurement, echo: Measurement) {
  return {
    reqPerSec: round(run.reqPerSec),
    ratioToEcho: round(run.reqPerSec / echo.reqPerSec, 3),
    p50Ms: round(run.latencyMs.p50, 3),
    p99Ms: round(run.latencyMs.p99, 3),
  };
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

await main();
