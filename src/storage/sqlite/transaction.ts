import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync } from 'node:sqlite';
import { NESTED_TRANSACTION, type TransactionBracket } from '../transaction-bracket.ts';

/** A write transaction, taken at once, so two processes on one file serialise. */
export const WRITE: TransactionBracket = { begin: 'BEGIN IMMEDIATE', commit: 'COMMIT', rollback: 'ROLLBACK' };

/** Runs `body` in a write transaction, or under a savepoint inside one that is already open (`SqliteGate`). */
export function transaction<T>(db: DatabaseSync, body: () => T): T {
  const bracket = db.isTransaction ? NESTED_TRANSACTION : WRITE;
  db.exec(bracket.begin);
  try {
    const result = body();
    db.exec(bracket.commit);
    return result;
  } catch (error) {
    rollBack(db, bracket);
    throw error;
  }
}

function rollBack(db: DatabaseSync, bracket: TransactionBracket): void {
  if (db.isTransaction) db.exec(bracket.rollback);
}

/**
 * Runs `body` in a read transaction, so several statements see one snapshot even while another process
 * writes the file (inside an open transaction they see it anyway). `body` must be synchronous.
 */
export function readTransaction<T>(db: DatabaseSync, body: () => T): T {
  if (db.isTransaction) return body();
  db.exec('BEGIN');
  try {
    return body();
  } finally {
    if (db.isTransaction) db.exec('COMMIT');
  }
}

/**
 * Gives one SQLite connection to one asynchronous transaction at a time. node:sqlite is synchronous, but while a
 * transaction's work awaits, other requests run: on the same connection their statements would join the
 * transaction and their reads would see its uncommitted rows. So while a transaction holds or waits for the
 * connection, every other use of it (through `guard`) waits its turn, in arrival order; otherwise it runs at once.
 */
export class SqliteGate {
  readonly #db: DatabaseSync;
  readonly #insideTransaction = new AsyncLocalStorage<true>();
  #tail: Promise<unknown> = Promise.resolve();
  /** Calls holding or waiting for the connection. */
  #queued = 0;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Runs `work` in one write transaction that may await; it commits when `work` resolves, rolls back when it rejects. */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.exclusive(() =>
      this.#insideTransaction.run(true, async () => {
        this.#db.exec(WRITE.begin);
        try {
          const result = await work();
          this.#db.exec(WRITE.commit);
          return result;
        } catch (error) {
          rollBack(this.#db, WRITE);
          throw error;
        }
      }),
    );
  }

  /** A view of `store` whose methods wait while a transaction holds the connection. */
  guard<T extends object>(store: T): T {
    const guarded: Record<string, unknown> = {};
    for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(store))) {
      const method: unknown = Reflect.get(store, name);
      if (name === 'constructor' || typeof method !== 'function') continue;
      guarded[name] = (...args: unknown[]) =>
        this.#queued === 0 ? method.apply(store, args) : this.#afterQueued(() => method.apply(store, args));
    }
    return guarded as T;
  }

  #afterQueued<T>(work: () => T): Promise<T> {
    if (this.#insideTransaction.getStore()) {
      return Promise.reject(
        new Error('A storage transaction used the storage itself: inside `transaction`, use only the stores it gives.'),
      );
    }
    return this.exclusive(async () => work());
  }

  /** Runs `work` when the calls ahead of it are done, with the connection to itself until it settles. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#queued++;
    const result = this.#tail.then(work);
    this.#tail = result.catch(() => undefined);
    try {
      return await result;
    } finally {
      this.#queued--;
    }
  }
}
