import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { TaskDefinition } from '../../src/runtime/tasks.ts';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.ts';
import { loadSettings, type SettingName } from '../../src/settings.ts';
import { client } from './http.ts';
import { createTestDatabase } from './postgres.ts';

export type StoreType = 'sqlite' | 'postgres';
export const storeTypes: readonly StoreType[] = ['sqlite', 'postgres'];

type Overrides = Partial<Record<SettingName, string | number | boolean>>;

/**
 * A real server on a free loopback port over a store of its own (a temporary sqlite file or a fresh PostgreSQL
 * database). `restart()` stops it and starts a new server over the same store; `dispose()` removes the store.
 */
export interface TestServer {
  readonly url: string;
  readonly server: RunningServer;
  /** Log lines the server wrote (JSON text). */
  readonly logLines: string[];
  /** The folder of the sqlite store (undefined on PostgreSQL). */
  readonly storeFolder: string | undefined;
  restart(overrides?: Overrides): Promise<void>;
  dispose(): Promise<void>;
}

export async function startTestServer(
  store: StoreType,
  overrides: Overrides = {},
  extraTasks: readonly TaskDefinition[] = [],
  options: Pick<ServerOptions, 'clock' | 'traceExportDelayMillis'> = {},
): Promise<TestServer> {
  let storeOverrides: Overrides;
  let removeStore: () => Promise<void>;
  let storeFolder: string | undefined;
  if (store === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'svc-test-'));
    storeFolder = dir;
    storeOverrides = { 'svc.datastore.type': 'sqlite', 'svc.datastore.sqlite.path': join(dir, 'svc.db') };
    removeStore = () => rm(dir, { recursive: true, force: true });
  } else {
    const database = await createTestDatabase();
    storeOverrides = { 'svc.datastore.type': 'postgres', 'svc.datastore.postgres.url': database.url };
    removeStore = database.drop;
  }
  const logLines: string[] = [];
  const logDestination = { write: (line: string) => logLines.push(line) };
  const start = (extra: Overrides) =>
    startServer(
      loadSettings({}, { 'svc.http.port': 0, 'svc.http.host': '127.0.0.1', ...storeOverrides, ...overrides, ...extra }),
      { logDestination, extraTasks, ...options },
    );

  let server = await start({});
  return {
    get url() {
      return server.url;
    },
    get server() {
      return server;
    },
    logLines,
    storeFolder,
    async restart(extra: Overrides = {}) {
      await server.close();
      server = await start(extra);
    },
    async dispose() {
      await server.close();
      await removeStore();
    },
  };
}

/**
 * The server of the enclosing describe block: started before its tests (arguments as for `startTestServer`) and
 * disposed after them. `server` is there from the block's first hook on; `api` calls it.
 */
export function serverOfBlock(...args: Parameters<typeof startTestServer>): {
  readonly server: TestServer;
  readonly api: ReturnType<typeof client>;
} {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(...args);
  });
  after(async () => {
    await server?.dispose();
  });
  const started = () => {
    if (!server) throw new Error('the server of this block is not started yet');
    return server;
  };
  return {
    get server() {
      return started();
    },
    api: client(() => started().url),
  };
}
