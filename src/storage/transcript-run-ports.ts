/** A stored transcript or suite run (`src/transcripts/runs.ts` owns the body's meaning). */
export interface TranscriptRunRecord {
  readonly id: string;
  /** The transcript or the suite that ran. */
  readonly subjectId: string;
  readonly createdOn: number;
  readonly passed: boolean;
  /** JSON text of the run result. */
  readonly bodyJson: string;
}

/** Results of transcript and suite runs, kept per transcript or suite. */
export interface TranscriptRunStore {
  put(run: TranscriptRunRecord): Promise<void>;
  get(subjectId: string, id: string): Promise<TranscriptRunRecord | undefined>;
  /** The runs of a transcript or suite, newest first, at most `limit`. */
  list(subjectId: string, limit: number): Promise<TranscriptRunRecord[]>;
}

export function toTranscriptRunRecord(row: Record<string, unknown>): TranscriptRunRecord {
  return {
    id: String(row.id),
    subjectId: String(row.subject_id),
    createdOn: Number(row.created_on),
    passed: row.passed === true || row.passed === 1 || row.passed === 1n,
    bodyJson: String(row.body),
  };
}
