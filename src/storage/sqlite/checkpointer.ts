import { Worker } from 'node:worker_threads';

/**
 * Moves WAL checkpoints off the event loop. The serving connection turns SQLite's automatic checkpoint off
 * (`wal_autocheckpoint = 0`), which would otherwise run inside whichever COMMIT crosses the threshold: copying
 * megabytes back into the database file and waiting for fsync in the middle of some unlucky turn. Instead a worker
 * thread with its own connection runs PASSIVE checkpoints, which never block a writer: every `intervalMillis`, and in
 * quick succession once the WAL is large and growing, until one has copied everything before the next commit; that
 * commit then starts the WAL from its beginning again, so the file stays bounded.
 */
export class Checkpointer {
  readonly #worker: Worker;
  #closed: Promise<void> | undefined;

  /** `catchUpAfterFrames`: WAL frames (64 MiB of 4 KiB pages) from which checkpoints follow each other closely. */
  constructor(path: string, intervalMillis = 250, catchUpAfterFrames = 16_384) {
    this.#worker = new Worker(new URL('./checkpointer-thread.ts', import.meta.url), {
      workerData: { path, intervalMillis, catchUpAfterFrames },
    });
    // A failed checkpoint is retried at the next interval by the thread itself; the thread never keeps the
    // process alive.
    this.#worker.unref();
  }

  /** Stops the thread after a last checkpoint (it copies what the closing connection left in the WAL). */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#worker.once('exit', () => resolve());
      this.#worker.ref(); // so that this process waits for the exit it awaits
      this.#worker.postMessage('close');
    });
    return this.#closed;
  }
}
