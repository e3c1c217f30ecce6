import { startServer } from './server.ts';
import { loadSettings, type Settings, SettingsError } from './settings.ts';

let settings: Settings;
try {
  settings = loadSettings();
} catch (error) {
  if (!(error instanceof SettingsError)) throw error;
  console.error(`Cannot start: ${error.message}`);
  process.exit(1);
}

let server: Awaited<ReturnType<typeof startServer>>;
try {
  server = await startServer(settings);
} catch (error) {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}
server.app.log.info(`listening on ${server.url} (store: ${settings['svc.datastore.type']})`);

// Graceful shutdown: drain (readiness fails, new requests get 503, turns in flight finish), close the store, exit.
const running = server;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    running.app.log.info(`${signal} received, draining, then shutting down`);
    running
      .drain()
      .then(() => running.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`Shutdown failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
  });
}
