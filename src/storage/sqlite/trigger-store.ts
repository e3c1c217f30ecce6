import type { DatabaseSync } from 'node:sqlite';
import type { DescriptorAccessChange, DescriptorOrigin } from '../ports.ts';
import type { TriggerRecord, TriggerStore } from '../runtime-ports.ts';
import { toTriggerRecord } from '../runtime-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const COLUMNS = 'intent, body, owner_id, space_id, visibility, grants';

const STATEMENTS = {
  get: `SELECT ${COLUMNS} FROM triggers WHERE intent = ?`,
  replace: 'UPDATE triggers SET body = ?, last_modified_on = ? WHERE intent = ?',
  insert: `INSERT INTO triggers (intent, body, created_on, last_modified_on, owner_id, space_id, visibility)
    VALUES (?, ?, ?, ?, ?, ?, ?)`,
  setAccess: `UPDATE triggers SET visibility = coalesce(?, visibility), space_id = coalesce(?, space_id),
    grants = coalesce(?, grants) WHERE intent = ?`,
  delete: 'DELETE FROM triggers WHERE intent = ?',
  list: `SELECT ${COLUMNS} FROM triggers ORDER BY intent`,
  managed: 'SELECT conversation_id FROM managed_conversations WHERE intent = ? AND user_id = ?',
  setManaged: `INSERT INTO managed_conversations (intent, user_id, conversation_id) VALUES (?, ?, ?)
    ON CONFLICT (intent, user_id) DO UPDATE SET conversation_id = excluded.conversation_id`,
  clearManaged: 'DELETE FROM managed_conversations WHERE intent = ? AND user_id = ? AND conversation_id = ?',
};

/** Managed-agent triggers and the conversation kept per (intent, user), in SQLite. */
export class SqliteTriggerStore extends SqliteStore<keyof typeof STATEMENTS> implements TriggerStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async get(intent: string): Promise<TriggerRecord | undefined> {
    const row = this.sql.get.get(intent);
    return row === undefined ? undefined : toTriggerRecord(row);
  }

  async put(intent: string, bodyJson: string, now: number, origin: DescriptorOrigin = {}): Promise<boolean> {
    return this.write(() => {
      if (Number(this.sql.replace.run(bodyJson, now, intent).changes) > 0) return false;
      this.sql.insert.run(
        intent,
        bodyJson,
        now,
        now,
        origin.ownerId ?? null,
        origin.spaceId ?? null,
        origin.visibility ?? null,
      );
      return true;
    });
  }

  async setAccess(intent: string, change: DescriptorAccessChange): Promise<TriggerRecord | undefined> {
    this.sql.setAccess.run(change.visibility ?? null, change.spaceId ?? null, change.grants ?? null, intent);
    return this.get(intent);
  }

  async delete(intent: string): Promise<boolean> {
    return Number(this.sql.delete.run(intent).changes) > 0;
  }

  async list(): Promise<TriggerRecord[]> {
    return this.sql.list.all().map(toTriggerRecord);
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
