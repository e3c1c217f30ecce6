import type pg from 'pg';

/**
 * Runs `body` on one pooled client inside BEGIN/COMMIT (READ COMMITTED: each statement sees what committed
 * before it started). Rolls back and rethrows on failure; a client whose rollback failed is discarded.
 */
export async function inTransaction<T>(pool: pg.Pool, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}
