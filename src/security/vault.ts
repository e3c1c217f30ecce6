import { LRUCache } from 'lru-cache';
import type { VaultMeters } from '../ops/domain-metrics.ts';
import { AppError, invalid } from '../errors.ts';
import type { SecretMetadata, SecretStore } from '../storage/secret-ports.ts';
import { MissingSecretError, VAULT_REFERENCE, type ResolvedText, type SecretResolver } from './secret-references.ts';
import {
  dataKeyAad,
  deriveKeyEncryptionKey,
  keyCheckValue,
  newDataKey,
  open,
  sameKeyCheckValue,
  seal,
  secretAad,
} from './vault-crypto.ts';
import { DEFAULT_TENANT, isSecretName, parseReference, SECRET_NAME_RULE } from './vault-names.ts';

/**
 * The secrets vault (DESIGN §4.10, reference §13): write-only secrets sealed with envelope encryption
 * (`vault-crypto.ts`), read back only through `resolver()` for `${vault:NAME}` references at run time.
 * Without a master key the vault is disabled: every operation fails with 503 `unavailable`, and the resolver
 * reports each reference as missing. No method ever puts a secret value into an error message or a log.
 */

export const VAULT_DISABLED_MESSAGE =
  'The vault is disabled: set svc.vault.master-key (environment SVC_VAULT_MASTER_KEY) to enable it.';
const KEY_CHECK_META = 'kek-check-value';

/** The master key differs from the one the store's secrets were sealed with. */
export class VaultKeyMismatchError extends Error {
  constructor() {
    super(
      "The vault master key (svc.vault.master-key) does not match the key this store's secrets were sealed with; start with the original key.",
    );
    this.name = 'VaultKeyMismatchError';
  }
}

export interface VaultOptions {
  /** Decrypted values are cached this long (default 60 s) ... */
  readonly cacheTtlMs?: number;
  /** ... at most this many (default 1000). */
  readonly cacheMaxEntries?: number;
  readonly clock?: () => number;
  /** PBKDF2 work factor; only tests lower it. */
  readonly kdfIterations?: number;
  /** Told after a secret was written or removed (other instances then forget their cached value). */
  readonly onChange?: (tenant: string, name: string) => void;
  /** Vault operations as metrics. */
  readonly meters?: VaultMeters | undefined;
}

/** Opens the vault over `store`; refuses (VaultKeyMismatchError) a master key other than the store's. */
export async function openVault(
  store: SecretStore,
  masterKey: string | undefined,
  options: VaultOptions = {},
): Promise<Vault> {
  if (masterKey === undefined || masterKey === '') return new Vault(store, undefined, options);
  const kek = await deriveKeyEncryptionKey(masterKey, options.kdfIterations);
  const expected = keyCheckValue(kek);
  const stored = await store.putMetaIfAbsent(KEY_CHECK_META, expected);
  if (!sameKeyCheckValue(stored, expected)) throw new VaultKeyMismatchError();
  return new Vault(store, kek, options);
}

export interface PutSecret {
  readonly name: string;
  readonly value: string;
  /** Undefined keeps the description a replaced secret had. */
  readonly description?: string | undefined;
  readonly tenant?: string | undefined;
}

function checkName(name: string): void {
  if (!isSecretName(name))
    throw invalid(`'${name.slice(0, 200)}' is not a valid secret name: use ${SECRET_NAME_RULE}.`);
}

export class Vault {
  readonly #store: SecretStore;
  readonly #kek: Buffer | undefined;
  readonly #clock: () => number;
  readonly #dataKeys = new Map<string, Promise<Buffer | undefined>>();
  /** Decrypted values, for `cacheTtlMs`; in process memory only. */
  readonly #values: LRUCache<string, string>;
  readonly #onChange: ((tenant: string, name: string) => void) | undefined;
  readonly #meters: VaultMeters | undefined;

  /** Use `openVault`, which checks the master key. */
  constructor(store: SecretStore, kek: Buffer | undefined, options: VaultOptions = {}) {
    this.#store = store;
    this.#kek = kek;
    this.#clock = options.clock ?? Date.now;
    this.#values = new LRUCache({
      max: options.cacheMaxEntries ?? 1000,
      ttl: options.cacheTtlMs ?? 60_000,
      ttlResolution: 0,
      perf: { now: this.#clock },
    });
    this.#onChange = options.onChange;
    this.#meters = options.meters;
  }

  /** Runs one vault operation, counted by outcome (`missing` for a secret that is not there). */
  async #counted<T>(operation: string, work: () => Promise<T>, missing?: (result: T) => boolean): Promise<T> {
    const meters = this.#meters;
    if (meters === undefined) return work();
    try {
      const result = await work();
      meters.operation(operation, missing?.(result) ? 'missing' : 'ok');
      return result;
    } catch (error) {
      meters.operation(operation, error instanceof MissingSecretError ? 'missing' : 'error');
      throw error;
    }
  }

  get enabled(): boolean {
    return this.#kek !== undefined;
  }

  /** Creates or replaces a secret. */
  put(secret: PutSecret): Promise<{ created: boolean; metadata: SecretMetadata }> {
    return this.#counted('write', () => this.#put(secret));
  }

  async #put(secret: PutSecret): Promise<{ created: boolean; metadata: SecretMetadata }> {
    const kek = this.#enabledKek();
    const tenant = secret.tenant ?? DEFAULT_TENANT;
    checkName(secret.name);
    if (secret.value === '') throw invalid('A secret value must not be empty.', { path: '$.value' });
    const dataKey = await this.#dataKey(kek, tenant, true);
    const sealed = seal(dataKey!, Buffer.from(secret.value, 'utf8'), secretAad(tenant, secret.name));
    try {
      return await this.#store.put({
        tenant,
        name: secret.name,
        sealed,
        description: secret.description,
        now: this.#clock(),
      });
    } finally {
      this.forget(tenant, secret.name);
      this.#onChange?.(tenant, secret.name);
    }
  }

  /** Drops a cached value, so that the next resolution reads the store. */
  forget(tenant: string, name: string): void {
    this.#values.delete(cacheKey(tenant, name));
  }

  /** For secret-scoped properties: stores `value` under `name` of the default tenant. */
  async writeSecret(name: string, value: string): Promise<void> {
    await this.put({ name, value });
  }

  describe(name: string, tenant = DEFAULT_TENANT): Promise<SecretMetadata | undefined> {
    return this.#counted(
      'describe',
      () => this.#describe(name, tenant),
      (found) => found === undefined,
    );
  }

  async #describe(name: string, tenant: string): Promise<SecretMetadata | undefined> {
    this.#enabledKek();
    if (!isSecretName(name)) return undefined;
    const record = await this.#store.get(tenant, name);
    if (record === undefined) return undefined;
    const { sealed: _sealed, ...metadata } = record;
    return metadata;
  }

  list(tenant = DEFAULT_TENANT): Promise<SecretMetadata[]> {
    return this.#counted('list', async () => {
      this.#enabledKek();
      return this.#store.list(tenant);
    });
  }

  /** False when there was no such secret. */
  remove(name: string, tenant = DEFAULT_TENANT): Promise<boolean> {
    return this.#counted(
      'delete',
      () => this.#remove(name, tenant),
      (removed) => !removed,
    );
  }

  async #remove(name: string, tenant: string): Promise<boolean> {
    this.#enabledKek();
    if (!isSecretName(name)) return false;
    try {
      return await this.#store.delete(tenant, name);
    } finally {
      this.forget(tenant, name);
      this.#onChange?.(tenant, name);
    }
  }

  /** Replaces `${vault:NAME}` / `${vault:tenant/NAME}` references by the secrets' values (cached briefly). */
  resolver(): SecretResolver {
    return { resolve: (text) => this.#resolve(text) };
  }

  async #resolve(text: string): Promise<ResolvedText> {
    const pattern = new RegExp(VAULT_REFERENCE.source, 'g');
    const references = new Set([...text.matchAll(pattern)].map((match) => match[1]!));
    if (references.size === 0) return { text, secretValues: [] };
    const values = new Map<string, string>();
    for (const reference of references)
      values.set(reference, await this.#counted('resolve', () => this.#reveal(reference)));
    return {
      text: text.replace(pattern, (_, reference: string) => values.get(reference)!),
      secretValues: [...new Set(values.values())],
    };
  }

  async #reveal(reference: string): Promise<string> {
    const kek = this.#kek;
    if (kek === undefined)
      throw new MissingSecretError(reference, 'cannot be read: the vault is disabled (set svc.vault.master-key)');
    const { tenant, name } = parseReference(reference);
    const key = cacheKey(tenant, name);
    const cached = this.#values.get(key);
    if (cached !== undefined) return cached;
    const record = isSecretName(name) ? await this.#store.get(tenant, name) : undefined;
    const dataKey = record && (await this.#dataKey(kek, tenant, false));
    if (record === undefined || dataKey === undefined) throw new MissingSecretError(reference, 'is not in the vault');
    const value = open(dataKey, record.sealed, secretAad(tenant, name), `the secret '${reference}'`).toString('utf8');
    this.#values.set(key, value);
    return value;
  }

  #enabledKek(): Buffer {
    if (this.#kek === undefined) throw new AppError('unavailable', VAULT_DISABLED_MESSAGE);
    return this.#kek;
  }

  /** The tenant's data key, unwrapped; created (first writer wins) when `create` and the tenant has none. */
  #dataKey(kek: Buffer, tenant: string, create: boolean): Promise<Buffer | undefined> {
    const known = this.#dataKeys.get(tenant);
    if (known !== undefined) return known;
    const loading = (async () => {
      let wrapped = await this.#store.dataKey(tenant);
      if (wrapped === undefined) {
        if (!create) return undefined;
        const fresh = seal(kek, newDataKey(), dataKeyAad(tenant));
        wrapped = await this.#store.putDataKeyIfAbsent(tenant, fresh, this.#clock());
      }
      return open(kek, wrapped, dataKeyAad(tenant), `the data key of tenant '${tenant}'`);
    })();
    this.#dataKeys.set(tenant, loading);
    // Only an unwrapped key is kept; a miss or a failure is asked again next time.
    loading.then(
      (key) => key === undefined && this.#dataKeys.delete(tenant),
      () => this.#dataKeys.delete(tenant),
    );
    return loading;
  }
}

const cacheKey = (tenant: string, name: string) => `${tenant}/${name}`;
