import type { Queryable } from './transaction.ts';
import { toTranscriptRunRecord, type TranscriptRunRecord, type TranscriptRunStore } from '../transcript-run-ports.ts';

const COLUMNS = 'id, subject_id, created_on, passed, body';

/** Transcript and suite runs in PostgreSQL. */
export class PostgresTranscriptRunStore implements TranscriptRunStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async put(run: TranscriptRunRecord): Promise<void> {
    await this.#db.query(
      'INSERT INTO transcript_runs (id, subject_id, created_on, passed, body) VALUES ($1, $2, $3, $4, $5)',
      [run.id, run.subjectId, run.createdOn, run.passed, run.bodyJson],
    );
  }

  async get(subjectId: string, id: string): Promise<TranscriptRunRecord | undefined> {
    const { rows } = await this.#db.query(`SELECT ${COLUMNS} FROM transcript_runs WHERE subject_id = $1 AND id = $2`, [
      subjectId,
      id,
    ]);
    return rows[0] === undefined ? undefined : toTranscriptRunRecord(rows[0]);
  }

  async list(subjectId: string, limit: number): Promise<TranscriptRunRecord[]> {
    const { rows } = await this.#db.query(
      `SELECT ${COLUMNS} FROM transcript_runs WHERE subject_id = $1 ORDER BY created_on DESC, id DESC LIMIT $2`,
      [subjectId, limit],
    );
    return rows.map(toTranscriptRunRecord);
  }
}
