import type { DatabaseSync } from 'node:sqlite';

/** Runs `body` in a write transaction (taken at once, so two processes on one file serialise). */
export function transaction<T>(db: DatabaseSync, body: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = body();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * Runs `body` in a read transaction, so several statements see one snapshot even while another process
 * writes the file. `body` must be synchronous (nothing else runs on the connection meanwhile).
 */
export function readTransaction<T>(db: DatabaseSync, body: () => T): T {
  db.exec('BEGIN');
  try {
    return body();
  } finally {
    if (db.isTransaction) db.exec('COMMIT');
  }
}
