import type { Storage } from './ports.ts';

export type StorageOptions =
  | { readonly type: 'sqlite'; readonly path: string }
  | {
      readonly type: 'postgres';
      readonly url: string;
      /** A query without an answer this long fails and its connection is closed (0 or absent: no limit). */
      readonly queryTimeoutMillis?: number;
    };

/**
 * Opens the configured store and brings its schema up to date before returning. Adapters are loaded on
 * demand, so an embedded set-up never loads `pg`. Failures reject with an Error naming the store and the
 * cause (never a password).
 */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  if (options.type === 'sqlite') {
    const { openSqliteStorage } = await import('./sqlite/sqlite-storage.ts');
    return openSqliteStorage(options.path);
  }
  const { openPostgresStorage } = await import('./postgres/postgres-storage.ts');
  return openPostgresStorage(options.url, options.queryTimeoutMillis);
}
