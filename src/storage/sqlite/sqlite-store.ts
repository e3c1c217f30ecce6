import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { GroupCommit } from './group-commit.ts';

/** A store over one SQLite connection; its statements (name -> SQL) are prepared once, when it is made. */
export abstract class SqliteStore<Name extends string> {
  protected readonly db: DatabaseSync;
  protected readonly sql: Readonly<Record<Name, StatementSync>>;
  readonly #writes: GroupCommit;

  constructor(db: DatabaseSync, statements: Readonly<Record<Name, string>>, writes: GroupCommit) {
    this.db = db;
    this.#writes = writes;
    const prepared = Object.entries<string>(statements).map(([name, text]) => [name, db.prepare(text)]);
    this.sql = Object.fromEntries(prepared) as Record<Name, StatementSync>;
  }

  /** Runs `body`'s statements as one write, committed with the other writes of the same moment (`GroupCommit`). */
  protected write<T>(body: () => T): Promise<T> {
    return this.#writes.write(body);
  }
}
