/** The statements that open, commit and roll back a transaction (either adapter). */
export interface TransactionBracket {
  readonly begin: string;
  readonly commit: string;
  readonly rollback: string;
}

/**
 * Inside a transaction already open on the connection: a savepoint, so a failure undoes only its own part.
 * Rolling back to a savepoint keeps it; it is released as well. The same SQL on SQLite and PostgreSQL.
 */
export const NESTED_TRANSACTION: TransactionBracket = {
  begin: 'SAVEPOINT nested',
  commit: 'RELEASE SAVEPOINT nested',
  rollback: 'ROLLBACK TO SAVEPOINT nested; RELEASE SAVEPOINT nested',
};
