import type { ApiKeyRecord, ApiKeyStore, ChatThreadStore } from '../openai-ports.ts';
import { toApiKeyRecord } from '../openai-rows.ts';
import type { Queryable } from './transaction.ts';

/** API keys in PostgreSQL; every method is one statement. */
export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { id, name, keyHash, agents, createdOn, createdBy } = record;
    await this.#db.query(
      'INSERT INTO api_keys (id, name, key_hash, agents, created_on, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, name, keyHash, JSON.stringify(agents), createdOn, createdBy],
    );
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.#db.query('SELECT * FROM api_keys ORDER BY created_on DESC, id DESC');
    return rows.map(toApiKeyRecord);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.#db.query('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash]);
    return rows[0] === undefined ? undefined : toApiKeyRecord(rows[0]);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'UPDATE api_keys SET revoked_on = $1 WHERE id = $2 AND revoked_on IS NULL',
      [now, id],
    );
    return rowCount === 1;
  }
}

/** Chat threads in PostgreSQL; every method is one statement. */
export class PostgresChatThreadStore implements ChatThreadStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async find(historyHash: string): Promise<string | undefined> {
    const { rows } = await this.#db.query('SELECT conversation_id FROM chat_threads WHERE history_hash = $1', [
      historyHash,
    ]);
    return rows[0]?.conversation_id;
  }

  async put(historyHash: string, conversationId: string, now: number): Promise<void> {
    await this.#db.query(
      `INSERT INTO chat_threads (history_hash, conversation_id, created_on) VALUES ($1, $2, $3)
       ON CONFLICT (history_hash) DO UPDATE SET conversation_id = excluded.conversation_id`,
      [historyHash, conversationId, now],
    );
  }
}
