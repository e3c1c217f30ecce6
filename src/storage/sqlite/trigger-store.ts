import type { DatabaseSync } from 'node:sqlite';
import type { TriggerStore } from '../runtime-ports.ts';
import { SqliteStore } from './sqlite-store.ts';
import { transaction } from './transaction.ts';

const STATEMENTS = {
  get: 'SELECT body FROM triggers WHERE intent = ?',
  replace: 'UPDATE triggers SET body = ?, last_modified_on = ? WHERE intent = ?',
  insert: 'INSERT INTO triggers (intent, body, created_on, last_modified_on) VALUES (?, ?, ?, ?)',
  delete: 'DELETE FROM triggers WHERE intent = ?',
  list: 'SELECT intent, body FROM triggers ORDER BY intent',
  managed: 'SELECT conversation_id FROM managed_conversations WHERE intent = ? AND user_id = ?',
  setManaged: `INSERT INTO managed_conversations (intent, user_id, conversation_id) VALUES (?, ?, ?)
    ON CONFLICT (intent, user_id) DO UPDATE SET conversation_id = excluded.conversation_id`,
  clearManaged: 'DELETE FROM managed_conversations WHERE intent = ? AND user_id = ? AND conversation_id = ?',
};

/** Managed-agent triggers and the conversation kept per (intent, user), in SQLite. */
export class SqliteTriggerStore extends SqliteStore<keyof typeof STATEMENTS> implements TriggerStore {
  constructor(db: DatabaseSync) {
    super(db, STATEMENTS);
  }

  async get(intent: string): Promise<string | undefined> {
    const row = this.sql.get.get(intent);
    return row === undefined ? undefined : String(row.body);
  }

  async put(intent: string, bodyJson: string, now: number): Promise<boolean> {
    return transaction(this.db, () => {
      if (Number(this.sql.replace.run(bodyJson, now, intent).changes) > 0) return false;
      this.sql.insert.run(intent, bodyJson, now, now);
      return true;
    });
  }

  async delete(intent: string): Promise<boolean> {
    return Number(this.sql.delete.run(intent).changes) > 0;
  }

  async list(): Promise<Array<{ intent: string; bodyJson: string }>> {
    return this.sql.list.all().map((row) => ({ intent: String(row.intent), bodyJson: String(row.body) }));
  }

  async managedConversation(intent: string, userId: string): Promise<string | undefined> {
    const row = this.sql.managed.get(intent, userId);
    return row === undefined ? undefined : String(row.conversation_id);
  }

  async setManagedConversation(intent: string, userId: string, conversationId: string): Promise<void> {
    this.sql.setManaged.run(intent, userId, conversationId);
  }

  async clearManagedConversation(intent: string, userId: string, conversationId: string): Promise<void> {
    this.sql.clearManaged.run(intent, userId, conversationId);
  }
}
