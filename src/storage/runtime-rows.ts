import type {
  ConversationCommit,
  ConversationRow,
  ConversationStateName,
  DeploymentRecord,
  LoadedConversation,
  StoredStepText,
  TriggerRecord,
} from './runtime-ports.ts';

/** A stored step's JSON text as a string, whichever form its store read it in. */
export function stepString(text: StoredStepText): string {
  return typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8');
}

/** A loaded conversation with its steps' texts as strings. */
export function withStepStrings(loaded: LoadedConversation | undefined): LoadedConversation | undefined {
  return loaded && { row: loaded.row, steps: loaded.steps.map(stepString) };
}

/**
 * Maps a `conversations` row (either adapter) to a header. PostgreSQL returns `bigint` columns as strings,
 * hence the conversions. Every key is always present so headers share one shape.
 */
export function toConversationRow(row: Record<string, unknown>): ConversationRow {
  return {
    id: String(row.id),
    agentId: String(row.agent_id),
    agentVersion: Number(row.agent_version),
    userId: String(row.user_id),
    environment: String(row.environment),
    state: String(row.state) as ConversationStateName,
    createdOn: Number(row.created_on),
    lastModifiedOn: Number(row.last_modified_on),
    stepCount: Number(row.step_count),
    revision: Number(row.revision),
    stateJson: String(row.state_json),
  };
}

/** The columns of a `conversations` row (either adapter) that a header fills, in the tables' order. */
export const HEADER_COLUMNS = [
  'id',
  'agent_id',
  'agent_version',
  'user_id',
  'environment',
  'state',
  'created_on',
  'last_modified_on',
  'step_count',
  'revision',
  'state_json',
] as const;

/** A header's values in the order of `HEADER_COLUMNS` (the inverse of `toConversationRow`). */
export function headerValues(row: ConversationRow): Array<string | number> {
  return [
    row.id,
    row.agentId,
    row.agentVersion,
    row.userId,
    row.environment,
    row.state,
    row.createdOn,
    row.lastModifiedOn,
    row.stepCount,
    row.revision,
    row.stateJson,
  ];
}

/**
 * Checks the caller's side of the commit contract (programming errors, thrown) and returns the index of the
 * first appended step.
 */
export function firstAppendedIndex(id: string, expectedRevision: number, change: ConversationCommit): number {
  const { row, appendSteps } = change;
  if (row.id !== id) throw new Error(`commit of conversation ${id} carries the header of ${row.id}`);
  if (row.revision !== expectedRevision + 1) {
    throw new Error(`commit of conversation ${id}: revision must be ${expectedRevision + 1}, not ${row.revision}`);
  }
  const first = row.stepCount - appendSteps.length;
  if (first < 0)
    throw new Error(`commit of conversation ${id}: stepCount ${row.stepCount} < ${appendSteps.length} appended steps`);
  return first;
}

/** Checks that a new conversation's header counts exactly the steps it is created with. */
export function checkNewConversation(row: ConversationRow, steps: readonly string[]): void {
  if (row.stepCount !== steps.length) {
    throw new Error(`new conversation ${row.id}: stepCount ${row.stepCount} but ${steps.length} steps`);
  }
}

/** Maps a `deployments` row (either adapter) to a record. */
export function toDeploymentRecord(row: Record<string, unknown>): DeploymentRecord {
  return {
    environment: String(row.environment),
    agentId: String(row.agent_id),
    agentVersion: Number(row.agent_version),
    deployedOn: Number(row.deployed_on),
  };
}

/** Maps a `triggers` row (either adapter) to a record. */
export function toTriggerRecord(row: Record<string, unknown>): TriggerRecord {
  const text = (value: unknown) => (value === null || value === undefined ? undefined : String(value));
  return {
    intent: String(row.intent),
    bodyJson: String(row.body),
    ownerId: text(row.owner_id),
    spaceId: text(row.space_id),
    visibility: text(row.visibility),
    grants: text(row.grants),
  };
}
