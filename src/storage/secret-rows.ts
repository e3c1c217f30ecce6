import type { SealedBox, SecretMetadata } from './secret-ports.ts';

/** Maps vault rows (either adapter) to sealed boxes and metadata; PostgreSQL returns `bigint` columns as strings. */

type Row = Record<string, unknown>;

export const sealedOf = (row: Row): SealedBox => ({
  ciphertext: String(row.ciphertext),
  iv: String(row.iv),
  tag: String(row.tag),
});

export const metadataOf = (row: Row): SecretMetadata => ({
  tenant: String(row.tenant),
  name: String(row.name),
  description: String(row.description),
  createdAt: Number(row.created_at),
  lastModifiedAt: Number(row.last_modified_at),
});
