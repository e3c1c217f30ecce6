import type { DatabaseSync } from 'node:sqlite';
import type { UserPropertyStore } from '../runtime-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  load: 'SELECT name, value FROM user_properties WHERE user_id = ? ORDER BY name',
  upsert: `INSERT INTO user_properties (user_id, name, value, updated_on) VALUES (?, ?, ?, ?)
    ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, updated_on = excluded.updated_on`,
  deleteAll: 'DELETE FROM user_properties WHERE user_id = ?',
  deleteOlderThan: 'DELETE FROM user_properties WHERE updated_on < ?',
};

/** Long-term user properties in SQLite. */
export class SqliteUserPropertyStore extends SqliteStore<keyof typeof STATEMENTS> implements UserPropertyStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async load(userId: string): Promise<Map<string, string>> {
    return new Map(this.sql.load.all(userId).map((row) => [String(row.name), String(row.value)]));
  }

  async upsert(userId: string, values: ReadonlyMap<string, string>, now: number): Promise<void> {
    if (values.size === 0) return;
    await this.write(() => {
      for (const [name, value] of values) this.sql.upsert.run(userId, name, value, now);
    });
  }

  async deleteAll(userId: string): Promise<number> {
    return this.write(() => Number(this.sql.deleteAll.run(userId).changes));
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    return this.write(() => Number(this.sql.deleteOlderThan.run(cutoff).changes));
  }
}
