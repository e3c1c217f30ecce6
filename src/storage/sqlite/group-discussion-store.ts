import type { DatabaseSync } from 'node:sqlite';
import {
  GROUP_DISCUSSION_COLUMNS,
  groupDiscussionRow,
  toGroupDiscussionRecord,
  type GroupDiscussionRecord,
  type GroupDiscussionStore,
} from '../group-discussion-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  create: `INSERT INTO group_discussions (${GROUP_DISCUSSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  update: 'UPDATE group_discussions SET last_modified_on = ?, state = ?, lease_until = ?, body = ? WHERE id = ?',
  claim: `UPDATE group_discussions SET state = 'RUNNING', lease_until = ?
    WHERE group_id = ? AND id = ? AND (state <> 'RUNNING' OR lease_until < ?)`,
  get: `SELECT ${GROUP_DISCUSSION_COLUMNS} FROM group_discussions WHERE group_id = ? AND id = ?`,
  list: `SELECT ${GROUP_DISCUSSION_COLUMNS} FROM group_discussions WHERE group_id = ?
    ORDER BY created_on DESC, id DESC LIMIT ?`,
  delete: 'DELETE FROM group_discussions WHERE group_id = ? AND id = ?',
};

/** Group discussions in SQLite. */
export class SqliteGroupDiscussionStore extends SqliteStore<keyof typeof STATEMENTS> implements GroupDiscussionStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async create(record: GroupDiscussionRecord): Promise<void> {
    await this.write(() => this.sql.create.run(...groupDiscussionRow(record)));
  }

  async update(record: GroupDiscussionRecord): Promise<void> {
    await this.write(() =>
      this.sql.update.run(record.lastModifiedOn, record.state, record.leaseUntil ?? null, record.bodyJson, record.id),
    );
  }

  claim(groupId: string, id: string, now: number, leaseUntil: number): Promise<boolean> {
    return this.write(() => Number(this.sql.claim.run(leaseUntil, groupId, id, now).changes) === 1);
  }

  async get(groupId: string, id: string): Promise<GroupDiscussionRecord | undefined> {
    const row = this.sql.get.get(groupId, id);
    return row === undefined ? undefined : toGroupDiscussionRecord(row);
  }

  async list(groupId: string, limit: number): Promise<GroupDiscussionRecord[]> {
    return this.sql.list.all(groupId, limit).map(toGroupDiscussionRecord);
  }

  delete(groupId: string, id: string): Promise<boolean> {
    return this.write(() => Number(this.sql.delete.run(groupId, id).changes) === 1);
  }
}
