import type { DatabaseSync } from 'node:sqlite';
import type { ApiKeyRecord, ApiKeyStore, ChatThreadStore } from '../openai-ports.ts';
import { toApiKeyRecord } from '../openai-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const KEY_STATEMENTS = {
  create: `INSERT INTO api_keys (id, name, key_hash, agents, created_on, created_by) VALUES (?, ?, ?, ?, ?, ?)`,
  list: 'SELECT * FROM api_keys ORDER BY created_on DESC, id DESC',
  find: 'SELECT * FROM api_keys WHERE key_hash = ?',
  revoke: 'UPDATE api_keys SET revoked_on = ? WHERE id = ? AND revoked_on IS NULL',
};

/** API keys in SQLite; every method is one statement. */
export class SqliteApiKeyStore extends SqliteStore<keyof typeof KEY_STATEMENTS> implements ApiKeyStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, KEY_STATEMENTS, writes);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { id, name, keyHash, agents, createdOn, createdBy } = record;
    await this.write(() => this.sql.create.run(id, name, keyHash, JSON.stringify(agents), createdOn, createdBy));
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.sql.list.all().map(toApiKeyRecord);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.sql.find.get(keyHash);
    return row === undefined ? undefined : toApiKeyRecord(row);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    return this.write(() => Number(this.sql.revoke.run(now, id).changes) > 0);
  }
}

const THREAD_STATEMENTS = {
  find: 'SELECT conversation_id FROM chat_threads WHERE history_hash = ?',
  put: `INSERT INTO chat_threads (history_hash, conversation_id, created_on) VALUES (?, ?, ?)
    ON CONFLICT (history_hash) DO UPDATE SET conversation_id = excluded.conversation_id`,
};

/** Chat threads in SQLite; every method is one statement. */
export class SqliteChatThreadStore extends SqliteStore<keyof typeof THREAD_STATEMENTS> implements ChatThreadStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, THREAD_STATEMENTS, writes);
  }

  async find(historyHash: string): Promise<string | undefined> {
    const row = this.sql.find.get(historyHash);
    return row === undefined ? undefined : String(row.conversation_id);
  }

  async put(historyHash: string, conversationId: string, now: number): Promise<void> {
    await this.write(() => this.sql.put.run(historyHash, conversationId, now));
  }
}
