/** Storage ports of the OpenAI-compatible API: API keys and the chats found again by their history. */

/** An API key as stored: never the key, only its SHA-256 (hex). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly keyHash: string;
  /** Agent ids the key may use (`*` = every agent). */
  readonly agents: readonly string[];
  readonly createdOn: number;
  readonly createdBy: string;
  readonly revokedOn: number | undefined;
}

export interface ApiKeyStore {
  create(record: ApiKeyRecord): Promise<void>;
  /** Every key, revoked ones included, newest first. */
  list(): Promise<ApiKeyRecord[]>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** Marks the key revoked; false when unknown or revoked already. */
  revoke(id: string, now: number): Promise<boolean>;
}

/**
 * Chats of clients that send the whole history each time: the conversation that a history (its hash) continues.
 */
export interface ChatThreadStore {
  find(historyHash: string): Promise<string | undefined>;
  /** Records (or moves) the history's conversation. */
  put(historyHash: string, conversationId: string, now: number): Promise<void>;
}
