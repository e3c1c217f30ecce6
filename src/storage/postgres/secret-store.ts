import type { Queryable } from './transaction.ts';
import type { SealedBox, SecretMetadata, SecretRecord, SecretStore, SecretWrite } from '../secret-ports.ts';
import { metadataOf, sealedOf } from '../secret-rows.ts';

/** The vault's sealed data in PostgreSQL; every method is one statement. */
export class PostgresSecretStore implements SecretStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async putMetaIfAbsent(key: string, value: string): Promise<string> {
    // The no-op update makes RETURNING yield the stored row also when it was already there.
    const { rows } = await this.#db.query(
      `INSERT INTO vault_meta (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = vault_meta.value RETURNING value`,
      [key, value],
    );
    return String(rows[0].value);
  }

  async dataKey(tenant: string): Promise<SealedBox | undefined> {
    const { rows } = await this.#db.query('SELECT ciphertext, iv, tag FROM vault_data_keys WHERE tenant = $1', [
      tenant,
    ]);
    return rows[0] === undefined ? undefined : sealedOf(rows[0]);
  }

  async putDataKeyIfAbsent(tenant: string, wrapped: SealedBox, now: number): Promise<SealedBox> {
    const { rows } = await this.#db.query(
      `INSERT INTO vault_data_keys (tenant, ciphertext, iv, tag, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant) DO UPDATE SET tenant = vault_data_keys.tenant RETURNING ciphertext, iv, tag`,
      [tenant, wrapped.ciphertext, wrapped.iv, wrapped.tag, now],
    );
    return sealedOf(rows[0]);
  }

  async put(write: SecretWrite): Promise<{ created: boolean; metadata: SecretMetadata }> {
    const { tenant, name, sealed, description, now } = write;
    // `xmax = 0` holds for a freshly inserted row only: it tells a creation from a replacement in one statement.
    const { rows } = await this.#db.query(
      `INSERT INTO vault_secrets (tenant, name, ciphertext, iv, tag, description, created_at, last_modified_at)
       VALUES ($1, $2, $3, $4, $5, coalesce($6, ''), $7, $7)
       ON CONFLICT (tenant, name) DO UPDATE SET ciphertext = excluded.ciphertext, iv = excluded.iv, tag = excluded.tag,
         description = coalesce($6, vault_secrets.description), last_modified_at = excluded.last_modified_at
       RETURNING tenant, name, description, created_at, last_modified_at, (xmax = 0) AS created`,
      [tenant, name, sealed.ciphertext, sealed.iv, sealed.tag, description ?? null, now],
    );
    return { created: rows[0].created === true, metadata: metadataOf(rows[0]) };
  }

  async get(tenant: string, name: string): Promise<SecretRecord | undefined> {
    const { rows } = await this.#db.query('SELECT * FROM vault_secrets WHERE tenant = $1 AND name = $2', [
      tenant,
      name,
    ]);
    return rows[0] === undefined ? undefined : { ...metadataOf(rows[0]), sealed: sealedOf(rows[0]) };
  }

  async list(tenant: string): Promise<SecretMetadata[]> {
    const { rows } = await this.#db.query(
      'SELECT tenant, name, description, created_at, last_modified_at FROM vault_secrets WHERE tenant = $1 ORDER BY name COLLATE "C"',
      [tenant],
    );
    return rows.map(metadataOf);
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM vault_secrets WHERE tenant = $1 AND name = $2', [
      tenant,
      name,
    ]);
    return (rowCount ?? 0) > 0;
  }
}
