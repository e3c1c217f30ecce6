import type { DatabaseSync } from 'node:sqlite';
import type { SealedBox, SecretMetadata, SecretRecord, SecretStore, SecretWrite } from '../secret-ports.ts';
import { metadataOf, sealedOf } from '../secret-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  insertMeta: 'INSERT INTO vault_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING',
  meta: 'SELECT value FROM vault_meta WHERE key = ?',
  insertDataKey: `INSERT INTO vault_data_keys (tenant, ciphertext, iv, tag, created_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant) DO NOTHING`,
  dataKey: 'SELECT ciphertext, iv, tag FROM vault_data_keys WHERE tenant = ?',
  exists: 'SELECT 1 AS found FROM vault_secrets WHERE tenant = ? AND name = ?',
  upsert: `INSERT INTO vault_secrets (tenant, name, ciphertext, iv, tag, description, created_at, last_modified_at)
    VALUES (:tenant, :name, :ciphertext, :iv, :tag, coalesce(:description, ''), :now, :now)
    ON CONFLICT (tenant, name) DO UPDATE SET ciphertext = excluded.ciphertext, iv = excluded.iv, tag = excluded.tag,
      description = coalesce(:description, vault_secrets.description), last_modified_at = excluded.last_modified_at
    RETURNING tenant, name, description, created_at, last_modified_at`,
  get: 'SELECT * FROM vault_secrets WHERE tenant = ? AND name = ?',
  list: 'SELECT tenant, name, description, created_at, last_modified_at FROM vault_secrets WHERE tenant = ? ORDER BY name',
  delete: 'DELETE FROM vault_secrets WHERE tenant = ? AND name = ?',
};

/** The vault's sealed data in SQLite. */
export class SqliteSecretStore extends SqliteStore<keyof typeof STATEMENTS> implements SecretStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async putMetaIfAbsent(key: string, value: string): Promise<string> {
    return this.write(() => {
      this.sql.insertMeta.run(key, value);
      return String(this.sql.meta.get(key)!.value);
    });
  }

  async dataKey(tenant: string): Promise<SealedBox | undefined> {
    const row = this.sql.dataKey.get(tenant);
    return row === undefined ? undefined : sealedOf(row);
  }

  async putDataKeyIfAbsent(tenant: string, wrapped: SealedBox, now: number): Promise<SealedBox> {
    return this.write(() => {
      this.sql.insertDataKey.run(tenant, wrapped.ciphertext, wrapped.iv, wrapped.tag, now);
      return sealedOf(this.sql.dataKey.get(tenant)!);
    });
  }

  async put(write: SecretWrite): Promise<{ created: boolean; metadata: SecretMetadata }> {
    const { tenant, name, sealed, description, now } = write;
    return this.write(() => {
      const created = this.sql.exists.get(tenant, name) === undefined;
      const row = this.sql.upsert.get({ tenant, name, ...sealed, description: description ?? null, now })!;
      return { created, metadata: metadataOf(row) };
    });
  }

  async get(tenant: string, name: string): Promise<SecretRecord | undefined> {
    const row = this.sql.get.get(tenant, name);
    return row === undefined ? undefined : { ...metadataOf(row), sealed: sealedOf(row) };
  }

  async list(tenant: string): Promise<SecretMetadata[]> {
    return this.sql.list.all(tenant).map(metadataOf);
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return Number(this.sql.delete.run(tenant, name).changes) > 0;
  }
}
