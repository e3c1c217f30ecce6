/**
 * A rule-only turn on PostgreSQL, in process: the bench agent on a server over a fresh database (see `store.ts`),
 * turns sent with Fastify's `inject` (no sockets), 16 at a time over 64 conversations like W1. Per round it reports
 * the service's CPU per turn (`process.cpuUsage`), the CPU per turn of the database's server processes (their
 * /proc stat; PostgreSQL on this machine), and the statements per turn sent by this process (counted by first
 * word). The minimum over rounds is the steadiest figure on a shared machine; use it to compare two commits.
 *
 *   node bench/postgres-turn.ts [rounds=8] [turnsPerRound=800]
 */
import pg from 'pg';
import { startServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';
import { ruleTurns } from './inject-turns.ts';
import { cpuSeconds } from './cpu.ts';
import { openBenchStore } from './store.ts';

const rounds = Number(process.argv[2] ?? 8);
const turnsPerRound = Number(process.argv[3] ?? 800);
const CONVERSATIONS = 64;
const CONNECTIONS = 16;

const statements = new Map<string, number>();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as string | { text?: string } | undefined;
  const text = typeof config === 'string' ? config : (config?.text ?? '?');
  for (const statement of text.split(';')) {
    const word = statement.trim().split(/\s+/, 1)[0]?.toUpperCase();
    if (word) statements.set(word, (statements.get(word) ?? 0) + 1);
  }
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const store = await openBenchStore({ ...process.env, BENCH_STORE: 'postgres' });
const database = new URL(store.settings['svc.datastore.postgres.url']!).pathname.slice(1);
const server = await startServer(
  loadSettings({}, { ...store.settings, 'svc.http.port': 0, 'svc.http.host': '127.0.0.1' }),
  { logDestination: { write: () => undefined } },
);
const admin = new pg.Client({ connectionString: store.settings['svc.datastore.postgres.url'] });
try {
  await admin.connect();
  const backendCpu = async () => {
    const { rows } = await admin.query(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return rows.reduce((sum, row) => sum + (cpuSeconds(row.pid as number) ?? 0), 0);
  };
  const turn = await ruleTurns(server, CONVERSATIONS);
  const service: number[] = [];
  const backends: number[] = [];
  const rates: number[] = [];
  let counted = new Map<string, number>();
  for (let round = 0; round < rounds; round++) {
    await server.audit.flush();
    const backendBefore = await backendCpu();
    statements.clear();
    const startedAt = performance.now();
    const before = process.cpuUsage();
    let next = 0;
    const connection = async () => {
      while (next < turnsPerRound) {
        const answer = await turn(round * turnsPerRound + next++);
        if (answer.statusCode !== 200) throw new Error(`turn: ${answer.statusCode} ${answer.body}`);
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, connection));
    await server.audit.flush();
    const used = process.cpuUsage(before);
    const seconds = (performance.now() - startedAt) / 1000;
    counted = new Map(statements);
    service.push((used.user + used.system) / turnsPerRound);
    backends.push((((await backendCpu()) - backendBefore) * 1e6) / turnsPerRound);
    rates.push(turnsPerRound / seconds);
  }
  const summary = (values: number[]) =>
    `min ${Math.min(...values).toFixed(0)} (rounds ${values.map((v) => v.toFixed(0)).join(' ')})`;
  console.log(`service CPU per turn (µs): ${summary(service)}`);
  console.log(`PostgreSQL backends' CPU per turn (µs): ${summary(backends)}`);
  console.log(`turns/s: max ${Math.max(...rates).toFixed(0)}`);
  const perTurn = [...counted].map(([word, n]) => `${word} ${(n / turnsPerRound).toFixed(2)}`);
  console.log(`statements per turn (last round, audit flush included): ${perTurn.join(', ')}`);
} finally {
  await admin.end().catch(() => undefined);
  await server.close();
  await store.dispose();
}
