import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';

/**
 * Backups of the embedded store with SQLite's online backup API (`node:sqlite`'s `backup()`).
 *
 * Taking one works while the service runs, from another process: the copy is made from a connection of its own in
 * a single step, that is inside one read transaction, so it is the database as of one commit (in WAL mode readers
 * and writers do not wait for each other; turns go on). Several steps would be restarted by every write of the
 * service. Restoring copies a checked backup into the database file through the same API, so a write-ahead log
 * left beside the target by an earlier database cannot mix with it; the service must be stopped meanwhile.
 */

/** Pages per backup step: all of them, so that the copy is one snapshot (the API takes no negative value). */
const ALL_PAGES = 0x7fff_ffff;

export class BackupError extends Error {}

/** Copies the database at `source` to the new file `destination`; answers the number of pages copied. */
export async function backupDatabase(source: string, destination: string): Promise<number> {
  if (!existsSync(source)) throw new BackupError(`there is no database at ${source}`);
  if (existsSync(destination)) throw new BackupError(`${destination} exists already; name a new file`);
  await mkdir(dirname(destination), { recursive: true });
  const db = new DatabaseSync(source, { readOnly: true });
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    const pages = await backup(db, destination, { rate: ALL_PAGES });
    const problems = integrityProblems(destination);
    if (problems.length > 0) throw new BackupError(`the copy fails its integrity check: ${problems.join('; ')}`);
    return pages;
  } finally {
    db.close();
  }
}

/**
 * Restores the backup `from` as the database `to` (the service stopped). An existing database is replaced only
 * when `replace` is set. The backup is checked first; a damaged one changes nothing.
 */
export async function restoreDatabase(from: string, to: string, options: { replace: boolean }): Promise<number> {
  if (!existsSync(from)) throw new BackupError(`there is no backup at ${from}`);
  const problems = integrityProblems(from);
  if (problems.length > 0) throw new BackupError(`the backup fails its integrity check: ${problems.join('; ')}`);
  if (existsSync(to) && !options.replace) {
    throw new BackupError(`a database exists at ${to}; stop the service and pass --replace to overwrite it`);
  }
  await mkdir(dirname(to), { recursive: true });
  const db = new DatabaseSync(from, { readOnly: true });
  try {
    return await backup(db, to, { rate: ALL_PAGES });
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` of the database at `path`: nothing when it is sound, else SQLite's findings. */
export function integrityProblems(path: string): string[] {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (error) {
    return [`cannot be opened: ${(error as Error).message}`];
  }
  try {
    const findings = db
      .prepare('PRAGMA integrity_check')
      .all()
      .map((row) => String(row.integrity_check));
    return findings.length === 1 && findings[0] === 'ok' ? [] : findings;
  } catch (error) {
    return [(error as Error).message];
  } finally {
    db.close();
  }
}
