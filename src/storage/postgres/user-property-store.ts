import type { Queryable } from './transaction.ts';
import type { UserPropertyStore } from '../runtime-ports.ts';

/** Long-term user properties in PostgreSQL; every method is one statement. */
export class PostgresUserPropertyStore implements UserPropertyStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async load(userId: string): Promise<Map<string, string>> {
    const { rows } = await this.#db.query('SELECT name, value FROM user_properties WHERE user_id = $1 ORDER BY name', [
      userId,
    ]);
    return new Map(rows.map((row) => [row.name as string, row.value as string]));
  }

  async upsert(userId: string, values: ReadonlyMap<string, string>, now: number): Promise<void> {
    if (values.size === 0) return;
    await this.#db.query(
      `INSERT INTO user_properties (user_id, name, value, updated_on)
       SELECT $1, n.name, n.value, $4 FROM unnest($2::text[], $3::text[]) AS n(name, value)
       ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, updated_on = excluded.updated_on`,
      [userId, [...values.keys()], [...values.values()], now],
    );
  }

  async deleteAll(userId: string): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM user_properties WHERE user_id = $1', [userId]);
    return rowCount ?? 0;
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM user_properties WHERE updated_on < $1', [cutoff]);
    return rowCount ?? 0;
  }
}
