import type { DatabaseSync } from 'node:sqlite';
import { toTranscriptRunRecord, type TranscriptRunRecord, type TranscriptRunStore } from '../transcript-run-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  put: 'INSERT INTO transcript_runs (id, subject_id, created_on, passed, body) VALUES (?, ?, ?, ?, ?)',
  get: 'SELECT id, subject_id, created_on, passed, body FROM transcript_runs WHERE subject_id = ? AND id = ?',
  list: `SELECT id, subject_id, created_on, passed, body FROM transcript_runs WHERE subject_id = ?
    ORDER BY created_on DESC, id DESC LIMIT ?`,
};

/** Transcript and suite runs in SQLite. */
export class SqliteTranscriptRunStore extends SqliteStore<keyof typeof STATEMENTS> implements TranscriptRunStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async put(run: TranscriptRunRecord): Promise<void> {
    this.sql.put.run(run.id, run.subjectId, run.createdOn, run.passed ? 1 : 0, run.bodyJson);
  }

  async get(subjectId: string, id: string): Promise<TranscriptRunRecord | undefined> {
    const row = this.sql.get.get(subjectId, id);
    return row === undefined ? undefined : toTranscriptRunRecord(row);
  }

  async list(subjectId: string, limit: number): Promise<TranscriptRunRecord[]> {
    return this.sql.list.all(subjectId, limit).map(toTranscriptRunRecord);
  }
}
