import {
  memoryOwner,
  type MemoryCategory,
  type MemoryUser,
  type MemoryVisibility,
  type MemoryWrite,
  type UserMemoryEntry,
  type UserMemoryStore,
} from '../user-memory-ports.ts';
import type { Queryable } from './transaction.ts';

const COLUMNS = `id, user_id, key, value, category, visibility, source_agent_id, group_ids, source_conversation_id,
  access_count, created_at, updated_at`;

/** Persistent user memory in PostgreSQL; every method is one statement. */
export class PostgresUserMemoryStore implements UserMemoryStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async list(userId: string): Promise<UserMemoryEntry[]> {
    const { rows } = await this.#db.query(
      `SELECT ${COLUMNS} FROM user_memories WHERE user_id = $1 ORDER BY updated_at DESC, id DESC`,
      [userId],
    );
    return rows.map(entryOf);
  }

  async get(id: string): Promise<UserMemoryEntry | undefined> {
    const { rows } = await this.#db.query(`SELECT ${COLUMNS} FROM user_memories WHERE id = $1`, [id]);
    return rows[0] === undefined ? undefined : entryOf(rows[0]);
  }

  async upsert(entry: MemoryWrite, id: string, now: number): Promise<UserMemoryEntry> {
    const { rows } = await this.#db.query(
      `INSERT INTO user_memories (id, user_id, key, owner, value, category, visibility, source_agent_id, group_ids,
         source_conversation_id, access_count, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $11)
       ON CONFLICT (user_id, key, owner) DO UPDATE SET value = excluded.value, category = excluded.category,
         visibility = excluded.visibility, source_agent_id = excluded.source_agent_id, group_ids = excluded.group_ids,
         source_conversation_id = excluded.source_conversation_id, updated_at = excluded.updated_at
       RETURNING ${COLUMNS}`,
      [
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
      ],
    );
    return entryOf(rows[0]);
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM user_memories WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  }

  async deleteAll(userId: string): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM user_memories WHERE user_id = $1', [userId]);
    return rowCount ?? 0;
  }

  async countAccess(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#db.query('UPDATE user_memories SET access_count = access_count + 1 WHERE id = ANY($1::text[])', [
      [...ids],
    ]);
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM user_memories WHERE updated_at < $1', [cutoff]);
    return rowCount ?? 0;
  }

  async users(index: number, limit: number): Promise<MemoryUser[]> {
    const { rows } = await this.#db.query(
      `SELECT user_id, count(*) AS entries, max(updated_at) AS last_updated FROM user_memories
       GROUP BY user_id ORDER BY user_id LIMIT $1 OFFSET $2`,
      [limit, index * limit],
    );
    return rows.map((row) => ({
      userId: row.user_id as string,
      entries: Number(row.entries),
      lastUpdatedAt: Number(row.last_updated),
    }));
  }
}

function entryOf(row: Record<string, unknown>): UserMemoryEntry {
  return {
    id: row.id as string,
    userId: row.user_id as string,
    key: row.key as string,
    value: JSON.parse(row.value as string),
    category: row.category as MemoryCategory,
    visibility: row.visibility as MemoryVisibility,
    sourceAgentId: (row.source_agent_id as string | null) ?? undefined,
    groupIds: JSON.parse(row.group_ids as string) as string[],
    sourceConversationId: (row.source_conversation_id as string | null) ?? undefined,
    accessCount: Number(row.access_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
