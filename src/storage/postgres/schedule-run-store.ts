import type { Queryable } from './transaction.ts';
import {
  SCHEDULE_RUN_COLUMNS,
  scheduleRunRow,
  toScheduleRunRecord,
  type RunResult,
  type ScheduleRunRecord,
  type ScheduleRunStore,
} from '../schedule-run-ports.ts';

/** Schedule runs in PostgreSQL; the unique (schedule, due time) key makes a claim win on exactly one instance. */
export class PostgresScheduleRunStore implements ScheduleRunStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async claim(run: ScheduleRunRecord): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `INSERT INTO schedule_runs (${SCHEDULE_RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (schedule_id, due_on) DO NOTHING`,
      scheduleRunRow(run),
    );
    return rowCount === 1;
  }

  async finish(scheduleId: string, id: string, result: RunResult): Promise<void> {
    await this.#db.query(
      `UPDATE schedule_runs SET finished_on = $1, outcome = $2, conversation_id = $3, detail = $4
       WHERE schedule_id = $5 AND id = $6`,
      [result.finishedOn, result.outcome, result.conversationId ?? null, result.detail ?? null, scheduleId, id],
    );
  }

  async list(scheduleId: string, limit: number): Promise<ScheduleRunRecord[]> {
    const { rows } = await this.#db.query(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs WHERE schedule_id = $1 ORDER BY due_on DESC LIMIT $2`,
      [scheduleId, limit],
    );
    return rows.map(toScheduleRunRecord);
  }

  async lastConversation(scheduleId: string): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      `SELECT conversation_id FROM schedule_runs WHERE schedule_id = $1 AND conversation_id IS NOT NULL
       ORDER BY due_on DESC LIMIT 1`,
      [scheduleId],
    );
    return rows[0] === undefined ? undefined : String(rows[0].conversation_id);
  }
}
