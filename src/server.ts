import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './http/app.ts';
import { createLogBuffer, teeDestination } from './ops/log-buffer.ts';
import { createMetrics, instrumentStorage } from './ops/metrics.ts';
import type { Settings } from './settings.ts';
import { openStorage } from './storage/open.ts';

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
}

/** Start-up order: settings (given) -> storage -> app -> listen. */
export async function startServer(settings: Settings, options: ServerOptions = {}): Promise<RunningServer> {
  const metrics = createMetrics();
  const storage = instrumentStorage(
    await openStorage(
      settings['svc.datastore.type'] === 'postgres'
        ? { type: 'postgres', url: settings['svc.datastore.postgres.url'] }
        : { type: 'sqlite', path: settings['svc.datastore.sqlite.path'] },
    ),
    metrics,
  );
  const logBuffer = createLogBuffer(settings['svc.logs.buffer-size']);
  const app = await buildApp({
    settings, storage, metrics, logBuffer,
    logger: {
      level: settings['svc.log.level'],
      stream: teeDestination(logBuffer, options.logDestination ?? process.stdout),
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
  });
  try {
    await app.listen({ port: settings['svc.http.port'], host: settings['svc.http.host'] });
  } catch (error) {
    await app.close();
    await storage.close();
    throw error;
  }
  const { port } = app.server.address() as AddressInfo;
  const host = settings['svc.http.host'] === '0.0.0.0' ? '127.0.0.1' : settings['svc.http.host'];
  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => (closing ??= app.close().then(() => storage.close())),
  };
}
