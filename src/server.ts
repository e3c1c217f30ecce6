import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './http/app.ts';
import { TriggerService } from './integrations/managed/triggers.ts';
import { createLogBuffer, teeDestination } from './ops/log-buffer.ts';
import { createMetrics, instrumentStorage } from './ops/metrics.ts';
import { ResourceService } from './resources/service.ts';
import { ConversationService } from './runtime/conversations.ts';
import { DeploymentService } from './runtime/deployments.ts';
import { TaskRegistry, type LifecycleTask } from './runtime/tasks.ts';
import type { Settings } from './settings.ts';
import { LocalCluster } from './storage/local-cluster.ts';
import { openStorage } from './storage/open.ts';
import { builtInTasks } from './tasks/index.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** Base URL, e.g. `http://127.0.0.1:7070`. */
  readonly url: string;
  /** Stops accepting connections, lets in-flight requests finish, then closes the store. */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Where log lines go besides the in-memory buffer (stdout by default; tests pass a sink). */
  readonly logDestination?: { write(line: string): unknown };
  /** Task types besides the built-in ones (an embedder's own tasks). */
  readonly extraTasks?: readonly LifecycleTask[];
}

/**
 * The composition root. Start-up order: settings (given) -> storage -> services (deployments compiled again)
 * -> HTTP app -> listen.
 */
export async function startServer(settings: Settings, options: ServerOptions = {}): Promise<RunningServer> {
  const metrics = createMetrics();
  const logBuffer = createLogBuffer(settings['svc.logs.buffer-size']);
  const logger = pino(
    { level: settings['svc.log.level'], redact: ['req.headers.authorization', 'req.headers.cookie'] },
    teeDestination(logBuffer, options.logDestination ?? process.stdout),
  );
  const storage = instrumentStorage(
    await openStorage(
      settings['svc.datastore.type'] === 'postgres'
        ? { type: 'postgres', url: settings['svc.datastore.postgres.url'] }
        : { type: 'sqlite', path: settings['svc.datastore.sqlite.path'] },
    ),
    metrics,
  );
  const cluster = settings['svc.datastore.type'] === 'postgres'
    ? new (await import('./storage/postgres/cluster.ts')).PostgresCluster(settings['svc.datastore.postgres.url'])
    : new LocalCluster();

  const resources = new ResourceService(storage.resources);
  const deployments = new DeploymentService({
    store: storage.deployments,
    read: (kind, id, version) => storage.resources.read(kind, id, version),
    registry: new TaskRegistry([...builtInTasks(), ...(options.extraTasks ?? [])]),
    log: logger,
    cluster,
  });
  const conversations = new ConversationService({
    store: storage.conversations,
    cluster,
    userProperties: storage.userProperties,
    deployments,
    log: logger,
    turnTimeoutMs: settings['svc.conversations.turn-timeout-seconds'] * 1000,
    redoCacheSize: settings['svc.conversations.redo-cache-size'],
    maxActiveConversations: settings['svc.coordinator.max-active-conversations'],
  });
  const triggers = new TriggerService(storage.triggers, conversations);

  let app: FastifyInstance | undefined;
  try {
    await deployments.restore();
    app = await buildApp({ settings, storage, metrics, logBuffer, logger, services: { resources, deployments, conversations, triggers } });
    await app.listen({ port: settings['svc.http.port'], host: settings['svc.http.host'] });
  } catch (error) {
    await app?.close();
    await deployments.close();
    await cluster.close();
    await storage.close();
    throw error;
  }
  const running = app;
  const { port } = running.server.address() as AddressInfo;
  const host = settings['svc.http.host'] === '0.0.0.0' ? '127.0.0.1' : settings['svc.http.host'];
  let closing: Promise<void> | undefined;
  return {
    app: running,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => (closing ??= running.close().then(async () => {
      await deployments.close();
      await cluster.close();
      await storage.close();
    })),
  };
}
