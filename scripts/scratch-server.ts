import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '../src/server.ts';
import { loadSettings } from '../src/settings.ts';

/** Runs `use` against a quiet server on a free loopback port over an empty sqlite store, removed afterwards. */
export async function withScratchServer<T>(use: (server: RunningServer) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-scratch-'));
  const server = await startServer(
    loadSettings(
      {},
      {
        'svc.http.port': 0,
        'svc.http.host': '127.0.0.1',
        'svc.datastore.type': 'sqlite',
        'svc.datastore.sqlite.path': join(dir, 'svc.db'),
      },
    ),
    { logDestination: { write: () => undefined } },
  );
  try {
    return await use(server);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
