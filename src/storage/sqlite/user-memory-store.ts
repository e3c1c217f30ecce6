import type { DatabaseSync } from 'node:sqlite';
import {
  memoryOwner,
  type MemoryCategory,
  type MemoryUser,
  type MemoryVisibility,
  type MemoryWrite,
  type UserMemoryEntry,
  type UserMemoryStore,
} from '../user-memory-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const COLUMNS = `id, user_id, key, value, category, visibility, source_agent_id, group_ids, source_conversation_id,
  access_count, created_at, updated_at`;

const STATEMENTS = {
  list: `SELECT ${COLUMNS} FROM user_memories WHERE user_id = ? ORDER BY updated_at DESC, id DESC`,
  get: `SELECT ${COLUMNS} FROM user_memories WHERE id = ?`,
  upsert: `INSERT INTO user_memories (id, user_id, key, owner, value, category, visibility, source_agent_id, group_ids,
      source_conversation_id, access_count, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
    ON CONFLICT (user_id, key, owner) DO UPDATE SET value = excluded.value, category = excluded.category,
      visibility = excluded.visibility, source_agent_id = excluded.source_agent_id, group_ids = excluded.group_ids,
      source_conversation_id = excluded.source_conversation_id, updated_at = excluded.updated_at
    RETURNING ${COLUMNS}`,
  delete: 'DELETE FROM user_memories WHERE id = ?',
  deleteAll: 'DELETE FROM user_memories WHERE user_id = ?',
  countAccess: 'UPDATE user_memories SET access_count = access_count + 1 WHERE id = ?',
  deleteOlderThan: 'DELETE FROM user_memories WHERE updated_at < ?',
  users: `SELECT user_id, count(*) AS entries, max(updated_at) AS last_updated FROM user_memories
    GROUP BY user_id ORDER BY user_id LIMIT ? OFFSET ?`,
};

/** Persistent user memory in SQLite. */
export class SqliteUserMemoryStore extends SqliteStore<keyof typeof STATEMENTS> implements UserMemoryStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async list(userId: string): Promise<UserMemoryEntry[]> {
    return this.sql.list.all(userId).map(entryOf);
  }

  async get(id: string): Promise<UserMemoryEntry | undefined> {
    const row = this.sql.get.get(id);
    return row === undefined ? undefined : entryOf(row);
  }

  async upsert(entry: MemoryWrite, id: string, now: number): Promise<UserMemoryEntry> {
    return this.write(() =>
      entryOf(
        this.sql.upsert.get(
          id,
          entry.userId,
          entry.key,
          memoryOwner(entry),
          JSON.stringify(entry.value),
          entry.category,
          entry.visibility,
          entry.sourceAgentId ?? null,
          JSON.stringify(entry.groupIds),
          entry.sourceConversationId ?? null,
          now,
          now,
        )!,
      ),
    );
  }

  async delete(id: string): Promise<boolean> {
    return this.write(() => Number(this.sql.delete.run(id).changes) > 0);
  }

  async deleteAll(userId: string): Promise<number> {
    return this.write(() => Number(this.sql.deleteAll.run(userId).changes));
  }

  async countAccess(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.write(() => {
      for (const id of ids) this.sql.countAccess.run(id);
    });
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    return this.write(() => Number(this.sql.deleteOlderThan.run(cutoff).changes));
  }

  async users(index: number, limit: number): Promise<MemoryUser[]> {
    return this.sql.users.all(limit, index * limit).map((row) => ({
      userId: String(row.user_id),
      entries: Number(row.entries),
      lastUpdatedAt: Number(row.last_updated),
    }));
  }
}

function entryOf(row: Record<string, unknown>): UserMemoryEntry {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    key: String(row.key),
    value: JSON.parse(String(row.value)),
    category: String(row.category) as MemoryCategory,
    visibility: String(row.visibility) as MemoryVisibility,
    sourceAgentId: row.source_agent_id === null ? undefined : String(row.source_agent_id),
    groupIds: JSON.parse(String(row.group_ids)) as string[],
    sourceConversationId: row.source_conversation_id === null ? undefined : String(row.source_conversation_id),
    accessCount: Number(row.access_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
