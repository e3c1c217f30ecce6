/** What became of one due time of a schedule (`src/schedules/scheduler.ts` owns the meaning). */
export const RUN_OUTCOMES = ['RUNNING', 'OK', 'ERROR', 'FAILED', 'SKIPPED'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface ScheduleRunRecord {
  readonly id: string;
  readonly scheduleId: string;
  /** The due time this run is for; one run per schedule and due time. */
  readonly dueOn: number;
  readonly startedOn: number;
  readonly finishedOn?: number | undefined;
  readonly outcome: RunOutcome;
  readonly conversationId?: string | undefined;
  /** Why it failed or was skipped. */
  readonly detail?: string | undefined;
}

export type RunResult = Required<Pick<ScheduleRunRecord, 'finishedOn' | 'outcome'>> &
  Pick<ScheduleRunRecord, 'conversationId' | 'detail'>;

/** The run history of schedules; recording a due time's run is the claim that makes every instance fire it once. */
export interface ScheduleRunStore {
  /** Records the run unless its schedule has one for the same due time; true when this call recorded it. */
  claim(run: ScheduleRunRecord): Promise<boolean>;
  finish(scheduleId: string, id: string, result: RunResult): Promise<void>;
  /** The runs of a schedule, latest due time first, at most `limit`. */
  list(scheduleId: string, limit: number): Promise<ScheduleRunRecord[]>;
  /** The conversation of the schedule's latest run that has one. */
  lastConversation(scheduleId: string): Promise<string | undefined>;
}

export function toScheduleRunRecord(row: Record<string, unknown>): ScheduleRunRecord {
  return {
    id: String(row.id),
    scheduleId: String(row.schedule_id),
    dueOn: Number(row.due_on),
    startedOn: Number(row.started_on),
    finishedOn: row.finished_on === null ? undefined : Number(row.finished_on),
    outcome: String(row.outcome) as RunOutcome,
    conversationId: row.conversation_id === null ? undefined : String(row.conversation_id),
    detail: row.detail === null ? undefined : String(row.detail),
  };
}

export const SCHEDULE_RUN_COLUMNS =
  'id, schedule_id, due_on, started_on, finished_on, outcome, conversation_id, detail';

/** The row values of a run, in the order of `SCHEDULE_RUN_COLUMNS`. */
export function scheduleRunRow(run: ScheduleRunRecord): (string | number | null)[] {
  return [
    run.id,
    run.scheduleId,
    run.dueOn,
    run.startedOn,
    run.finishedOn ?? null,
    run.outcome,
    run.conversationId ?? null,
    run.detail ?? null,
  ];
}
