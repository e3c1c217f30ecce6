/** A stored group discussion (`src/groups/group-service.ts` owns the body's meaning). */
export interface GroupDiscussionRecord {
  readonly id: string;
  readonly groupId: string;
  readonly createdOn: number;
  readonly lastModifiedOn: number;
  /** RUNNING while a question is being discussed, then DONE. */
  readonly state: string;
  /** While RUNNING: when another instance may take the discussion over (its instance died). */
  readonly leaseUntil?: number | undefined;
  /** JSON text of the discussion. */
  readonly bodyJson: string;
}

/** Group discussions: their transcripts, and who may continue one. */
export interface GroupDiscussionStore {
  create(record: GroupDiscussionRecord): Promise<void>;
  /** Replaces state, lease, body and modification time. */
  update(record: GroupDiscussionRecord): Promise<void>;
  /** Marks a discussion RUNNING until `leaseUntil` unless it is RUNNING with a lease that has not run out; true when taken. */
  claim(groupId: string, id: string, now: number, leaseUntil: number): Promise<boolean>;
  get(groupId: string, id: string): Promise<GroupDiscussionRecord | undefined>;
  /** The discussions of a group, newest first, at most `limit`. */
  list(groupId: string, limit: number): Promise<GroupDiscussionRecord[]>;
  delete(groupId: string, id: string): Promise<boolean>;
}

export const GROUP_DISCUSSION_COLUMNS = 'id, group_id, created_on, last_modified_on, state, lease_until, body';

export function toGroupDiscussionRecord(row: Record<string, unknown>): GroupDiscussionRecord {
  return {
    id: String(row.id),
    groupId: String(row.group_id),
    createdOn: Number(row.created_on),
    lastModifiedOn: Number(row.last_modified_on),
    state: String(row.state),
    leaseUntil: row.lease_until === null || row.lease_until === undefined ? undefined : Number(row.lease_until),
    bodyJson: String(row.body),
  };
}

/** The row values of a discussion, in the order of `GROUP_DISCUSSION_COLUMNS`. */
export function groupDiscussionRow(record: GroupDiscussionRecord): (string | number | null)[] {
  return [
    record.id,
    record.groupId,
    record.createdOn,
    record.lastModifiedOn,
    record.state,
    record.leaseUntil ?? null,
    record.bodyJson,
  ];
}
