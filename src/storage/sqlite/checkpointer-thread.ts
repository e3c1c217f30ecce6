/** The checkpointer's thread (see checkpointer.ts): its own connection, a PASSIVE checkpoint per interval. */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMillis } = workerData as { path: string; intervalMillis: number };
const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0;');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const run = () => {
  try {
    checkpoint.get();
  } catch {
    // Busy or interrupted: the next interval tries again; the WAL only grows meanwhile.
  }
};
const timer = setInterval(run, intervalMillis);
parentPort!.once('message', () => {
  clearInterval(timer);
  run();
  db.close();
  parentPort!.close();
});
