import type { Queryable } from './transaction.ts';
import {
  GROUP_DISCUSSION_COLUMNS,
  groupDiscussionRow,
  toGroupDiscussionRecord,
  type GroupDiscussionRecord,
  type GroupDiscussionStore,
} from '../group-discussion-ports.ts';

/** Group discussions in PostgreSQL. */
export class PostgresGroupDiscussionStore implements GroupDiscussionStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async create(record: GroupDiscussionRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO group_discussions (${GROUP_DISCUSSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      groupDiscussionRow(record),
    );
  }

  async update(record: GroupDiscussionRecord): Promise<void> {
    await this.#db.query(
      'UPDATE group_discussions SET last_modified_on = $1, state = $2, lease_until = $3, body = $4 WHERE id = $5',
      [record.lastModifiedOn, record.state, record.leaseUntil ?? null, record.bodyJson, record.id],
    );
  }

  async claim(groupId: string, id: string, now: number, leaseUntil: number): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `UPDATE group_discussions SET state = 'RUNNING', lease_until = $1
       WHERE group_id = $2 AND id = $3 AND (state <> 'RUNNING' OR lease_until < $4)`,
      [leaseUntil, groupId, id, now],
    );
    return rowCount === 1;
  }

  async get(groupId: string, id: string): Promise<GroupDiscussionRecord | undefined> {
    const { rows } = await this.#db.query(
      `SELECT ${GROUP_DISCUSSION_COLUMNS} FROM group_discussions WHERE group_id = $1 AND id = $2`,
      [groupId, id],
    );
    return rows[0] === undefined ? undefined : toGroupDiscussionRecord(rows[0]);
  }

  async list(groupId: string, limit: number): Promise<GroupDiscussionRecord[]> {
    const { rows } = await this.#db.query(
      `SELECT ${GROUP_DISCUSSION_COLUMNS} FROM group_discussions WHERE group_id = $1
       ORDER BY created_on DESC, id DESC LIMIT $2`,
      [groupId, limit],
    );
    return rows.map(toGroupDiscussionRecord);
  }

  async delete(groupId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM group_discussions WHERE group_id = $1 AND id = $2', [
      groupId,
      id,
    ]);
    return rowCount === 1;
  }
}
