import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { environmentName, type SettingName } from '../src/settings.ts';

export interface BenchStore {
  readonly type: 'sqlite' | 'postgres';
  /** Settings that point the service at this store. */
  readonly settings: Partial<Record<SettingName, string>>;
  /** Removes the store (temporary directory or database). */
  dispose(): Promise<void>;
}

/**
 * The store the service runs on: `BENCH_STORE=sqlite` (default; a file in a fresh temporary directory) or
 * `BENCH_STORE=postgres` (a fresh `svc_bench_<random>` database created through the admin URL in
 * `BENCH_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`, and dropped at the end).
 */
export async function openBenchStore(env: NodeJS.ProcessEnv = process.env): Promise<BenchStore> {
  const type = (env.BENCH_STORE ?? 'sqlite').trim().toLowerCase();
  if (type === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
    return {
      type: 'sqlite',
      settings: { 'svc.datastore.type': 'sqlite', 'svc.datastore.sqlite.path': join(dir, 'svc.db') },
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  }
  if (type !== 'postgres') throw new Error(`BENCH_STORE is ${JSON.stringify(type)}, expected sqlite or postgres`);

  const adminUrl = env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `svc_bench_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    type: 'postgres',
    settings: { 'svc.datastore.type': 'postgres', 'svc.datastore.postgres.url': url.toString() },
    dispose: () =>
      withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/** The service's environment: loopback, log level `warn`, the store's settings (plus `extra` settings). */
export function serviceEnvironment(
  store: BenchStore,
  extra: Partial<Record<SettingName, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = { SVC_HTTP_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' };
  for (const [name, value] of Object.entries({ ...store.settings, ...extra })) env[environmentName(name)] = value!;
  return env;
}

async function withAdmin<T>(adminUrl: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}
