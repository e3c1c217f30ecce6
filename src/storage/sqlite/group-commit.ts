import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { transaction, WRITE } from './transaction.ts';

interface PendingWrite {
  readonly write: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A group transaction takes no further write once its writes have run this long: the rest go to the next one, at
 * the next `setImmediate`, so that requests read meanwhile get their turn. One flush of everything pending took up
 * to 23 ms of the event loop under the latency benchmark's load (an audit batch beside a dozen turns).
 */
export const GROUP_BUDGET_MS = 1;

/**
 * Group commit: the writes that become ready while the event loop handles one batch of I/O (the turns of several
 * conversations, their audit entries) share one transaction, committed once at `setImmediate` (up to
 * `GROUP_BUDGET_MS` of writes; later ones wait for the next). Each write runs under its own savepoint, so one that
 * fails is undone alone; each caller's promise settles only after the shared COMMIT, so a write is acknowledged
 * only once it is committed. The COMMIT (the WAL append) is most of a small write's cost, and it is paid once per
 * batch instead of once per write.
 */
export class GroupCommit {
  readonly #db: DatabaseSync;
  readonly #begin: StatementSync;
  readonly #commit: StatementSync;
  #pending: PendingWrite[] = [];

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#begin = db.prepare(WRITE.begin);
    this.#commit = db.prepare(WRITE.commit);
  }

  /**
   * Runs `write` (synchronous statements) in the next group transaction and resolves with its result once that
   * transaction is committed. Inside a transaction already open on the connection (`Storage.transaction`), it
   * runs at once under a savepoint of that transaction instead: the open transaction's commit is the one that
   * counts, and waiting for a later group would wait for itself.
   */
  write<T>(write: () => T): Promise<T> {
    if (this.#db.isTransaction) {
      try {
        return Promise.resolve(transaction(this.#db, write));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0) this.#scheduleFlush();
      this.#pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Flushes at `setImmediate`, or later while a `Storage.transaction` holds the connection open between its
   * statements (the group's writes must not join it). Not through `SqliteGate`'s queue: a guarded write holds
   * its place there until this flush commits it.
   */
  #scheduleFlush(): void {
    setImmediate(() => (this.#db.isTransaction ? this.#scheduleFlush() : this.#flush()));
  }

  #flush(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const deadline = performance.now() + GROUP_BUDGET_MS;
    try {
      this.#begin.run();
      do outcomes.push(this.#underSavepoint(pending[outcomes.length]!.write));
      while (outcomes.length < pending.length && performance.now() < deadline);
      this.#commit.run();
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec(WRITE.rollback);
      // The writes of this transaction fail with it; when none could even start, every pending one does.
      const failed = outcomes.length === 0 ? pending.length : outcomes.length;
      this.#next(pending, failed);
      for (const { reject } of pending.slice(0, failed)) reject(error);
      return;
    }
    this.#next(pending, outcomes.length);
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.ok) pending[index]!.resolve(outcome.value);
      else pending[index]!.reject(outcome.error);
    }
  }

  /** Keeps the writes after the first `taken` for the next group transaction. */
  #next(pending: PendingWrite[], taken: number): void {
    this.#pending = pending.slice(taken);
    if (this.#pending.length > 0) this.#scheduleFlush();
  }

  /** Inside the open group transaction, `transaction` puts `write` under a savepoint of its own. */
  #underSavepoint(write: () => unknown): { ok: true; value: unknown } | { ok: false; error: unknown } {
    try {
      return { ok: true, value: transaction(this.#db, write) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}
