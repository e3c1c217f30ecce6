import pg from 'pg';
import { NESTED_TRANSACTION, type TransactionBracket } from '../transaction-bracket.ts';

/** Where a store sends its statements: the pool, or the client of a transaction it runs in. */
export type Queryable = pg.Pool | pg.PoolClient;

const TOP: TransactionBracket = { begin: 'BEGIN', commit: 'COMMIT', rollback: 'ROLLBACK' };

/**
 * Runs `body` inside BEGIN/COMMIT (READ COMMITTED: each statement sees what committed before it started): on a pool,
 * on one client taken for it (a client whose rollback failed is discarded); on the client of an open transaction,
 * under a savepoint. Rolls back and rethrows on failure.
 */
export async function inTransaction<T>(db: Queryable, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  if (!(db instanceof pg.Pool)) return bracketed(db, NESTED_TRANSACTION, body);
  const client = await checkOut(db);
  let broken: Error | undefined;
  try {
    return await bracketed(client, TOP, body, (rollbackError) => {
      broken = rollbackError;
    });
  } finally {
    client.release(broken);
  }
}

/**
 * Takes a client from the pool. While a client is checked out the pool does not listen to its errors, and a
 * connection lost between two of its queries (PostgreSQL restarting, the network cut) would be an unhandled
 * 'error' event that ends the process. Here it is ignored: the holder's next query on the client fails instead,
 * and the holder releases the client as broken.
 */
export async function checkOut(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  const ignore = () => {};
  client.on('error', ignore);
  const release = client.release;
  client.release = (destroy?: Error | boolean) => {
    client.off('error', ignore);
    release(destroy);
  };
  return client;
}

/** Runs `body` inside BEGIN/COMMIT on a client the caller holds (and releases). */
export function transactionOn<T>(client: pg.PoolClient, body: () => Promise<T>): Promise<T> {
  return bracketed(client, TOP, body);
}

async function bracketed<T>(
  client: pg.PoolClient,
  bracket: TransactionBracket,
  body: (client: pg.PoolClient) => Promise<T>,
  onRollbackFailure: (error: Error) => void = () => {},
): Promise<T> {
  await client.query(bracket.begin);
  try {
    const result = await body(client);
    await client.query(bracket.commit);
    return result;
  } catch (error) {
    await client.query(bracket.rollback).catch(onRollbackFailure);
    throw error;
  }
}
