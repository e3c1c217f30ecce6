/**
 * Storage ports of the conversation runtime (deployments, conversations, long-term properties, triggers).
 * Kept beside `ports.ts`; `Storage` exposes one of each.
 */

import type { DescriptorAccessChange, DescriptorOrigin } from './ports.ts';

export const CONVERSATION_STATES = [
  'READY',
  'IN_PROGRESS',
  'ENDED',
  'EXECUTION_INTERRUPTED',
  'ERROR',
  'AWAITING_HUMAN',
] as const;
export type ConversationStateName = (typeof CONVERSATION_STATES)[number];

/** The header row of a conversation; steps live in their own rows and are appended, never rewritten. */
export interface ConversationRow {
  readonly id: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId: string;
  readonly environment: string;
  readonly state: ConversationStateName;
  readonly createdOn: number;
  readonly lastModifiedOn: number;
  /** Number of stored steps (step 0 included). */
  readonly stepCount: number;
  /** Incremented by every write; a write names the revision it read (optimistic concurrency). */
  readonly revision: number;
  /** JSON text of what the runtime keeps beside the steps (properties, redo stack, aggregates). */
  readonly stateJson: string;
}

export interface ConversationQuery {
  readonly agentId?: string | undefined;
  readonly agentVersion?: number | undefined;
  readonly userId?: string | undefined;
  readonly state?: ConversationStateName | undefined;
  readonly environment?: string | undefined;
  /** Page number: skip = index * limit. */
  readonly index: number;
  readonly limit: number;
}

export interface ConversationCommit {
  /** The new header; its `revision` must be `expectedRevision + 1` and its `stepCount` the count after the change. */
  readonly row: ConversationRow;
  /** Removes the stored steps with index >= this one first (undo). */
  readonly truncateStepsFrom?: number | undefined;
  /** Steps to append (JSON text), at indexes `stepCount - appendSteps.length` ... */
  readonly appendSteps: readonly string[];
}

export type CommitOutcome = 'committed' | 'conflict' | 'not-found';

/** Retention: a page of conversations inactive since before a cutoff, oldest first. */
export interface InactiveQuery {
  /** true: only ENDED conversations; false: every other state. */
  readonly ended: boolean;
  /** Only conversations last modified before this (epoch ms). */
  readonly before: number;
  /** Continue after this one (the last of the previous page): keyset paging, so skipped ones do not come back. */
  readonly after?: InactiveConversation | undefined;
  readonly limit: number;
}

export interface InactiveConversation {
  readonly id: string;
  readonly lastModifiedOn: number;
}

/**
 * A stored step's JSON text as a store reads it: a string, or its UTF-8 bytes (a store that can hand over the bytes
 * spares decoding them into a string that the cache would encode again).
 */
export type StoredStepText = string | Uint8Array;

/** A conversation's header and steps (in index order) as read from the store. */
export interface LoadedConversation {
  readonly row: ConversationRow;
  readonly steps: StoredStepText[];
}

export interface ConversationStore {
  /** Stores a new conversation with its first steps. */
  create(row: ConversationRow, steps: readonly string[]): Promise<void>;
  /** Header and every step in order; undefined when unknown or deleted. */
  load(id: string): Promise<LoadedConversation | undefined>;
  /** Header and the steps from `fromIndex` on, from one consistent snapshot; undefined when unknown. */
  loadFrom(id: string, fromIndex: number): Promise<LoadedConversation | undefined>;
  /** The header alone (cheap freshness check of a cached conversation). */
  loadRow(id: string): Promise<ConversationRow | undefined>;
  /**
   * Stores that read without waiting (the embedded one) offer both of these: the runtime then loads a conversation's
   * latest steps only, and reads earlier ones when they are first asked for. The header and the latest `count` steps.
   */
  loadLatest?(id: string, count: number): Promise<LoadedConversation | undefined>;
  /** The texts of steps `fromIndex` to `toIndex` (excluded), read now; undefined when the conversation is gone. */
  readStepsNow?(id: string, fromIndex: number, toIndex: number): StoredStepText[] | undefined;
  /**
   * One atomic write: if the stored revision is `expectedRevision`, truncate/append steps and replace the header.
   * `conflict` when another writer got there first, `not-found` when the conversation is gone.
   */
  commit(id: string, expectedRevision: number, change: ConversationCommit): Promise<CommitOutcome>;
  /** Headers matching the query, most recently modified first. */
  list(query: ConversationQuery): Promise<ConversationRow[]>;
  /** Removes the conversation and its steps; false when unknown. */
  delete(id: string): Promise<boolean>;
  /** Conversations last modified before `query.before`, ENDED or not as asked, by (lastModifiedOn, id) ascending. */
  listInactive(query: InactiveQuery): Promise<InactiveConversation[]>;
}

/** Long-term properties: per user, carried across conversations. Values are JSON text. */
export interface UserPropertyStore {
  load(userId: string): Promise<Map<string, string>>;
  /** Inserts or replaces the named values. */
  upsert(userId: string, values: ReadonlyMap<string, string>, now: number): Promise<void>;
  /** Removes every value of a user (erasure); returns how many. */
  deleteAll(userId: string): Promise<number>;
  /** Retention sweep: removes values last written before `cutoff`; returns how many. */
  deleteOlderThan(cutoff: number): Promise<number>;
}

export interface DeploymentRecord {
  readonly environment: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly deployedOn: number;
}

/** Deployments that must survive a restart (`autoDeploy`); the compiled state itself lives in memory. */
export interface DeploymentStore {
  /** Records (or refreshes) a deployment. */
  put(record: DeploymentRecord): Promise<void>;
  /** Forgets a deployment; false when it was not recorded. */
  remove(environment: string, agentId: string, agentVersion: number): Promise<boolean>;
  list(): Promise<DeploymentRecord[]>;
}

/**
 * A trigger as stored: its body (JSON text) and, like a configuration resource, its owner, space, visibility and
 * grants (JSON text), undefined when not set (a trigger written while authentication was off has no owner).
 */
export interface TriggerRecord {
  readonly intent: string;
  readonly bodyJson: string;
  readonly ownerId: string | undefined;
  readonly spaceId: string | undefined;
  readonly visibility: string | undefined;
  readonly grants: string | undefined;
}

/** Managed-agent triggers, keyed by intent. */
export interface TriggerStore {
  get(intent: string): Promise<TriggerRecord | undefined>;
  /**
   * Creates (recording `origin`: owner, space, visibility) or replaces the body (owner, space, visibility and
   * grants kept); returns true when it created.
   */
  put(intent: string, bodyJson: string, now: number, origin?: DescriptorOrigin): Promise<boolean>;
  /** Sets the fields given (visibility, space, grants); the record after the change, undefined when unknown. */
  setAccess(intent: string, change: DescriptorAccessChange): Promise<TriggerRecord | undefined>;
  delete(intent: string): Promise<boolean>;
  list(): Promise<TriggerRecord[]>;
  /** The conversation kept for (intent, user), if any. */
  managedConversation(intent: string, userId: string): Promise<string | undefined>;
  setManagedConversation(intent: string, userId: string, conversationId: string): Promise<void>;
  /** Forgets the conversation kept for (intent, user) if it is still `conversationId`. */
  clearManagedConversation(intent: string, userId: string, conversationId: string): Promise<void>;
}
