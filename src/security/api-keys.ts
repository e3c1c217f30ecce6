import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError, invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import type { ApiKeyRecord, ApiKeyStore } from '../storage/openai-ports.ts';

/**
 * API keys for clients that have only a key (OpenAI-compatible chat clients): an admin creates one for a list of
 * agents and sees it once; the store keeps its SHA-256 only (a key is 256 random bits, so a fast hash is enough);
 * revoking it refuses it from then on. Keys authenticate only on the `/v1` paths.
 *
 * A verified key is remembered for `cacheMillis` (default 5 s), so a busy client costs no store read per request;
 * a key revoked on another instance is therefore refused there at most that long after.
 */

export const API_KEY_PREFIX = 'svc-sk-';

/** An API key as listed: everything but its hash. */
export interface ApiKeyView {
  readonly id: string;
  readonly name: string;
  readonly agents: readonly string[];
  readonly createdOn: number;
  readonly createdBy: string;
  readonly revokedOn?: number;
}

export function isApiKeyShaped(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

function viewOf(record: ApiKeyRecord): ApiKeyView {
  const { id, name, agents, createdOn, createdBy, revokedOn } = record;
  return { id, name, agents, createdOn, createdBy, ...(revokedOn === undefined ? {} : { revokedOn }) };
}

/** Whether the key may use the agent. */
export function keyAllowsAgent(key: Pick<ApiKeyRecord, 'agents'>, agentId: string): boolean {
  return key.agents.includes('*') || key.agents.includes(agentId);
}

export class ApiKeyService {
  readonly #store: ApiKeyStore;
  readonly #clock: () => number;
  readonly #verified: LRUCache<string, ApiKeyRecord>;

  constructor(store: ApiKeyStore, options: { clock?: () => number; cacheMillis?: number } = {}) {
    this.#store = store;
    this.#clock = options.clock ?? Date.now;
    this.#verified = new LRUCache({ max: 1_000, ttl: options.cacheMillis ?? 5_000 });
  }

  /** Creates a key; the answer holds the key itself, which is never shown again. */
  async create(name: string, agents: readonly string[], createdBy: string): Promise<ApiKeyView & { key: string }> {
    if (name.trim() === '') throw invalid('An API key needs a name.', { path: '$.name' });
    if (agents.length === 0)
      throw invalid("An API key needs the agents it may use ('*' for every agent).", { path: '$.agents' });
    const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
    const now = this.#clock();
    const record: ApiKeyRecord = {
      id: newId(now),
      name,
      keyHash: hashOf(key),
      agents: [...new Set(agents)],
      createdOn: now,
      createdBy,
      revokedOn: undefined,
    };
    await this.#store.create(record);
    return { ...viewOf(record), key };
  }

  async list(): Promise<ApiKeyView[]> {
    return (await this.#store.list()).map(viewOf);
  }

  /** Revokes a key (404 when unknown or revoked already). */
  async revoke(id: string): Promise<void> {
    if (!(await this.#store.revoke(id, this.#clock())))
      throw new AppError('not-found', `No active API key with id ${id}.`);
    this.#verified.clear();
  }

  /** The key's record; throws `unauthorized` for an unknown or revoked key (the message never shows the key). */
  async authenticate(key: string): Promise<ApiKeyRecord> {
    const hash = hashOf(key);
    const known = this.#verified.get(hash) ?? (await this.#store.findByHash(hash));
    if (known === undefined || known.revokedOn !== undefined)
      throw new AppError('unauthorized', 'The API key is unknown or was revoked.');
    this.#verified.set(hash, known);
    return known;
  }
}
