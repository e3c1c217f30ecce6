/**
 * Storage port of the secrets vault. The store only ever sees sealed bytes (base64 text): tenant data keys
 * wrapped by the key-encryption key, and secret values encrypted with their tenant's data key. Plaintext
 * never reaches this layer.
 */

/** The output of AES-256-GCM: ciphertext, 96-bit IV and 128-bit authentication tag, each base64. */
export interface SealedBox {
  readonly ciphertext: string;
  readonly iv: string;
  readonly tag: string;
}

/** What may be shown about a secret: everything but its value. Times are epoch milliseconds. */
export interface SecretMetadata {
  readonly tenant: string;
  readonly name: string;
  readonly description: string;
  readonly createdAt: number;
  readonly lastModifiedAt: number;
}

export interface SecretRecord extends SecretMetadata {
  readonly sealed: SealedBox;
}

export interface SecretWrite {
  readonly tenant: string;
  readonly name: string;
  readonly sealed: SealedBox;
  /** Undefined keeps the stored description (empty for a new secret). */
  readonly description: string | undefined;
  readonly now: number;
}

export interface SecretStore {
  /** Stores `value` under `key` unless a value is already there; returns the stored value either way. */
  putMetaIfAbsent(key: string, value: string): Promise<string>;
  /** The tenant's wrapped data key, if it has one. */
  dataKey(tenant: string): Promise<SealedBox | undefined>;
  /** Stores a wrapped data key unless the tenant has one; returns the tenant's key either way (the first writer wins). */
  putDataKeyIfAbsent(tenant: string, wrapped: SealedBox, now: number): Promise<SealedBox>;
  /** Creates or replaces a secret; a replacement keeps `createdAt`. Returns the stored metadata. */
  put(write: SecretWrite): Promise<{ readonly created: boolean; readonly metadata: SecretMetadata }>;
  get(tenant: string, name: string): Promise<SecretRecord | undefined>;
  /** Metadata of the tenant's secrets, by name. */
  list(tenant: string): Promise<SecretMetadata[]>;
  /** False when there was no such secret. */
  delete(tenant: string, name: string): Promise<boolean>;
}
