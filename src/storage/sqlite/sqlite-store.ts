import type { DatabaseSync, StatementSync } from 'node:sqlite';

/** A store over one SQLite connection; its statements (name -> SQL) are prepared once, when it is made. */
export abstract class SqliteStore<Name extends string> {
  protected readonly db: DatabaseSync;
  protected readonly sql: Readonly<Record<Name, StatementSync>>;

  constructor(db: DatabaseSync, statements: Readonly<Record<Name, string>>) {
    this.db = db;
    const prepared = Object.entries<string>(statements).map(([name, text]) => [name, db.prepare(text)]);
    this.sql = Object.fromEntries(prepared) as Record<Name, StatementSync>;
  }
}
