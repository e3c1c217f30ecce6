/**
 * The checkpointer's thread (see checkpointer.ts): its own connection, PASSIVE checkpoints. A checkpoint copies the
 * frames the WAL held when it began; the serving connection may commit meanwhile, and then the WAL never starts
 * over from its beginning: it grew without end (over 1 GB in the 30 s latency benchmark, each commit extending the
 * file). So once the WAL holds `catchUpAfterFrames` and keeps growing, checkpoints follow each other closely: each
 * has little to copy, and one usually finishes between two commits, after which the next commit starts the WAL from
 * its beginning again. (Not below that size: close checkpoints copy the hot pages again and again, and the thread
 * shares the core with the serving one: at the latency benchmark's rate it served 7-11% fewer turns.) When
 * the core is saturated that can still fail for long stretches (the WAL then grows until it succeeds); holding
 * writers back for a last checkpoint did not help there: under that load the checkpoint outlasts any short hold.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMillis, catchUpAfterFrames } = workerData as {
  path: string;
  intervalMillis: number;
  catchUpAfterFrames: number;
};
/** Pause between checkpoints while the WAL grows: enough to copy little each time, and to leave the core to others. */
const CATCH_UP_MILLIS = 10;

const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0;');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

let framesBefore = 0;
/** True when the WAL is large and got frames since the previous checkpoint: the next one should follow soon. */
const run = (): boolean => {
  try {
    const { log } = checkpoint.get() as { log: number };
    const growing = log !== framesBefore && log >= catchUpAfterFrames;
    framesBefore = log;
    return growing;
  } catch {
    // Busy or interrupted: tried again soon; the WAL only grows meanwhile.
    return true;
  }
};
let timer: NodeJS.Timeout | undefined;
const schedule = (delay: number) => {
  timer = setTimeout(() => schedule(run() ? CATCH_UP_MILLIS : intervalMillis), delay);
};
schedule(intervalMillis);
parentPort!.once('message', () => {
  clearTimeout(timer);
  run();
  db.close();
  parentPort!.close();
});
