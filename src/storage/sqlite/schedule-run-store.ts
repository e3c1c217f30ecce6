import type { DatabaseSync } from 'node:sqlite';
import {
  SCHEDULE_RUN_COLUMNS,
  scheduleRunRow,
  toScheduleRunRecord,
  type RunResult,
  type ScheduleRunRecord,
  type ScheduleRunStore,
} from '../schedule-run-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  claim: `INSERT INTO schedule_runs (${SCHEDULE_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (schedule_id, due_on) DO NOTHING`,
  finish: `UPDATE schedule_runs SET finished_on = ?, outcome = ?, conversation_id = ?, detail = ?
    WHERE schedule_id = ? AND id = ?`,
  list: `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs WHERE schedule_id = ? ORDER BY due_on DESC LIMIT ?`,
  lastConversation: `SELECT conversation_id FROM schedule_runs WHERE schedule_id = ? AND conversation_id IS NOT NULL
    ORDER BY due_on DESC LIMIT 1`,
};

/** Schedule runs in SQLite. */
export class SqliteScheduleRunStore extends SqliteStore<keyof typeof STATEMENTS> implements ScheduleRunStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  claim(run: ScheduleRunRecord): Promise<boolean> {
    return this.write(() => Number(this.sql.claim.run(...scheduleRunRow(run)).changes) === 1);
  }

  async finish(scheduleId: string, id: string, result: RunResult): Promise<void> {
    await this.write(() =>
      this.sql.finish.run(
        result.finishedOn,
        result.outcome,
        result.conversationId ?? null,
        result.detail ?? null,
        scheduleId,
        id,
      ),
    );
  }

  async list(scheduleId: string, limit: number): Promise<ScheduleRunRecord[]> {
    return this.sql.list.all(scheduleId, limit).map(toScheduleRunRecord);
  }

  async lastConversation(scheduleId: string): Promise<string | undefined> {
    const row = this.sql.lastConversation.get(scheduleId);
    return row === undefined ? undefined : String(row.conversation_id);
  }
}
