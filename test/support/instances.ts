import { startServer, type RunningServer, type ServerOptions } from '../../src/server.ts';
import { loadSettings, type SettingName } from '../../src/settings.ts';
import { call } from './http.ts';
import { createTestDatabase } from './postgres.ts';
import { waitFor } from './process.ts';

/**
 * Several service instances in this process on one fresh PostgreSQL database, as behind a load balancer (each with
 * its own pools, cluster coordination and caches); in-process so that tests can give them a clock or test tasks.
 */
export interface Instances {
  readonly databaseUrl: string;
  readonly servers: RunningServer[];
  close(): Promise<void>;
}

export async function startInstances(
  count: number,
  overrides: Partial<Record<SettingName, string | number | boolean>> = {},
  options: Omit<ServerOptions, 'logDestination'> = {},
): Promise<Instances> {
  const database = await createTestDatabase();
  const settings = loadSettings(
    {},
    {
      'svc.http.port': 0,
      'svc.http.host': '127.0.0.1',
      'svc.datastore.type': 'postgres',
      'svc.datastore.postgres.url': database.url,
      'svc.log.level': 'warn',
      ...overrides,
    },
  );
  const servers = await Promise.all(
    Array.from({ length: count }, () => startServer(settings, { ...options, logDestination: { write: () => true } })),
  );
  return {
    databaseUrl: database.url,
    servers,
    async close() {
      await Promise.all(servers.map((server) => server.close()));
      await database.drop();
    },
  };
}

/** Waits until the agent's version 1 is READY in production on the instance at `url` (deployments propagate). */
export function deployedOn(url: string, agentId: string): Promise<true> {
  return waitFor(async () => {
    const { status } = (await call(url, 'GET', `/administration/production/deploymentstatus/${agentId}?version=1`))
      .json;
    return status === 'READY' ? true : undefined;
  }, `agent ${agentId} deployed on ${url}`);
}
