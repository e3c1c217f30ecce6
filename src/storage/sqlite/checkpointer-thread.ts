/**
 * The checkpointer's thread (see checkpointer.ts): its own connection, PASSIVE checkpoints. A checkpoint copies the
 * frames the WAL held when it began; the serving connection may commit meanwhile, and then the WAL never starts
 * over from its beginning: it grew without end (over 1 GB in the 30 s latency benchmark, each commit extending the
 * file). So while frames keep coming, checkpoints follow each other closely: each has little to copy, and one
 * usually finishes between two commits, after which the next commit starts the WAL from its beginning again.
 * On a busy core that can fail for long: once the WAL holds `PAUSE_AFTER_FRAMES`, the thread asks the serving side
 * to hold its group commits back (`pause`; the event loop keeps running, turns wait for their commit) and runs one
 * more checkpoint meanwhile (`paused`, then `resume`), so that it copies everything and the next commit starts over.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMillis, pauseAfterFrames } = workerData as {
  path: string;
  intervalMillis: number;
  pauseAfterFrames: number;
};
/** Pause between checkpoints while the WAL grows: enough to copy little each time, and to leave the core to others. */
const CATCH_UP_MILLIS = 10;
/** Writes are held back at most once in this long. */
const PAUSE_EVERY_MILLIS = 1000;

const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0;');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

/** The WAL's frames (copied or not) when the checkpoint began, or undefined when it failed. */
function passiveCheckpoint(): number | undefined {
  try {
    return Number((checkpoint.get() as { log: number }).log);
  } catch {
    // Busy or interrupted: tried again soon; the WAL only grows meanwhile.
    return undefined;
  }
}

let framesBefore = 0;
let lastPause = -Infinity;
let timer: NodeJS.Timeout | undefined;
const schedule = (delay: number) => {
  timer = setTimeout(run, delay);
};

function run(): void {
  const frames = passiveCheckpoint();
  if (frames !== undefined && frames >= pauseAfterFrames && performance.now() - lastPause >= PAUSE_EVERY_MILLIS) {
    lastPause = performance.now();
    parentPort!.postMessage('pause'); // the next checkpoint runs when the writes are held
    return;
  }
  const grew = frames === undefined || frames !== framesBefore;
  framesBefore = frames ?? framesBefore;
  schedule(grew ? CATCH_UP_MILLIS : intervalMillis);
}

parentPort!.on('message', (message: 'paused' | 'close') => {
  if (message === 'paused') {
    passiveCheckpoint();
    parentPort!.postMessage('resume');
    schedule(CATCH_UP_MILLIS);
    return;
  }
  clearTimeout(timer);
  passiveCheckpoint();
  db.close();
  parentPort!.close();
});
schedule(intervalMillis);
