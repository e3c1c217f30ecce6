/**
 * Storage ports. Services depend on these interfaces only; `sqlite/` and `postgres/` implement them and
 * `test/storage-contract.test.ts` holds both to the same behaviour.
 *
 * Bodies are stored as JSON text exactly as given, so a resource reads back byte-identical.
 */
import type { ConversationStore, DeploymentStore, TriggerStore, UserPropertyStore } from './runtime-ports.ts';
import type { RateLimitStore } from './rate-limit-ports.ts';
import type { SecretStore } from './secret-ports.ts';
import type { AuditStore } from './audit-ports.ts';
import type { ChannelMessageStore } from './channel-message-ports.ts';
import type { GroupDiscussionStore } from './group-discussion-ports.ts';
import type { ScheduleRunStore } from './schedule-run-ports.ts';
import type { TranscriptRunStore } from './transcript-run-ports.ts';
import type { ApiKeyStore, ChatThreadStore } from './openai-ports.ts';
import type { KnowledgeStore } from './knowledge-ports.ts';
import type { UserMemoryStore } from './user-memory-ports.ts';

/** Descriptor fields that a caller may set at create time besides name and description. */
export interface DescriptorOrigin {
  readonly originId?: string | undefined;
  readonly ownerId?: string | undefined;
  readonly spaceId?: string | undefined;
  readonly visibility?: string | undefined;
}

export interface DescriptorRecord extends DescriptorOrigin {
  readonly kind: string;
  readonly id: string;
  /** The newest version (also when the resource is soft-deleted). */
  readonly currentVersion: number;
  readonly name: string;
  readonly description: string;
  /** JSON text of the grant list; owned by the security module. */
  readonly grants: string | undefined;
  readonly createdOn: number;
  readonly lastModifiedOn: number;
  readonly deleted: boolean;
}

export interface DescriptorQuery {
  /**
   * Plain text found case-insensitively anywhere in name, description or id (no pattern syntax, so matching
   * stays linear in the text); empty = everything.
   */
  readonly filter: string;
  /** Page number: skip = index * limit. */
  readonly index: number;
  /** Page size, >= 1. */
  readonly limit: number;
  readonly spaceId?: string | undefined;
}

export interface NewResource {
  readonly kind: string;
  readonly id: string;
  readonly bodyJson: string;
  readonly now: number;
  readonly name: string;
  readonly description: string;
  readonly origin: DescriptorOrigin;
}

export type UpdateOutcome =
  | { readonly status: 'updated'; readonly version: number }
  | { readonly status: 'not-found' }
  | { readonly status: 'stale'; readonly currentVersion: number };

export type DeleteOutcome =
  | { readonly status: 'deleted' }
  | { readonly status: 'not-found' }
  | { readonly status: 'stale'; readonly currentVersion: number };

export interface ConfigResourceStore {
  /** Writes version 1 and its descriptor. The id is new; a duplicate id is a programming error. */
  create(resource: NewResource): Promise<void>;
  /**
   * Appends version `expectedVersion + 1` if `expectedVersion` is the current version of a live resource.
   * Atomic: of two concurrent updates of the same version exactly one succeeds.
   */
  update(kind: string, id: string, expectedVersion: number, bodyJson: string, now: number): Promise<UpdateOutcome>;
  /** The JSON text of one version; undefined when unknown, or when it is the current version of a soft-deleted resource. */
  read(kind: string, id: string, version: number): Promise<string | undefined>;
  /** The descriptor, including soft-deleted ones (check `deleted`). */
  descriptor(kind: string, id: string): Promise<DescriptorRecord | undefined>;
  /** Finds a descriptor by id alone (ids are unique across kinds). */
  descriptorById(id: string): Promise<DescriptorRecord | undefined>;
  /** Soft delete of the current version: it becomes unreadable, older versions stay readable, the descriptor is flagged. */
  softDelete(kind: string, id: string, expectedVersion: number, now: number): Promise<DeleteOutcome>;
  /** Removes every version and the descriptor. Returns false when the id is unknown. */
  purge(kind: string, id: string): Promise<boolean>;
  /** The live descriptor of a kind whose `originId` equals the given one (newest modification first); undefined when none. */
  findByOrigin(kind: string, originId: string): Promise<DescriptorRecord | undefined>;
  /** Live descriptors of a kind, newest modification first. */
  listDescriptors(kind: string, query: DescriptorQuery): Promise<DescriptorRecord[]>;
  /** Sets name and/or description of a live resource; returns the new descriptor or undefined when unknown. */
  editDescriptor(
    kind: string,
    id: string,
    changes: DescriptorChanges,
    now: number,
  ): Promise<DescriptorRecord | undefined>;
  /**
   * Sets the access fields (visibility, space, grant list as JSON text) of a live resource; a field left undefined
   * keeps its value. Does not count as a modification. Returns the new descriptor, or undefined when unknown.
   */
  setAccess(kind: string, id: string, access: DescriptorAccessChange): Promise<DescriptorRecord | undefined>;
}

/** Name and/or description to set on a descriptor; a field left undefined keeps its value. */
export interface DescriptorChanges {
  readonly name?: string | undefined;
  readonly description?: string | undefined;
}

/** Access fields of a descriptor (`src/security/access.ts` owns their meaning). */
export interface DescriptorAccessChange {
  readonly visibility?: string | undefined;
  readonly spaceId?: string | undefined;
  readonly grants?: string | undefined;
}

/** The stores of a `Storage`; a transaction's work gets a set of them that writes inside the transaction. */
export interface Stores {
  readonly resources: ConfigResourceStore;
  readonly conversations: ConversationStore;
  readonly userProperties: UserPropertyStore;
  /** Persistent user memory (`src/user-memory/`). */
  readonly userMemories: UserMemoryStore;
  readonly deployments: DeploymentStore;
  readonly triggers: TriggerStore;
  /** Sealed data of the secrets vault (`src/security/vault.ts`). */
  readonly secrets: SecretStore;
  /** Write-once entries of the audit ledger (`src/ops/audit.ts`). */
  readonly audit: AuditStore;
  readonly rateLimits: RateLimitStore;
  /** Results of transcript and suite runs (`src/transcripts/runs.ts`). */
  readonly transcriptRuns: TranscriptRunStore;
  /** API keys of the OpenAI-compatible API (hashed). */
  readonly apiKeys: ApiKeyStore;
  /** Chats of the OpenAI-compatible API found again by their history. */
  readonly chatThreads: ChatThreadStore;
  /** Documents and chunks of knowledge bases (`src/knowledge/`). */
  readonly knowledge: KnowledgeStore;
  /** The run history of schedules (`src/schedules/scheduler.ts`). */
  readonly scheduleRuns: ScheduleRunStore;
  /** Inbound messages of messaging channels (`src/channels/channel-service.ts`). */
  readonly channelMessages: ChannelMessageStore;
  /** Group discussions and their transcripts (`src/groups/group-service.ts`). */
  readonly groupDiscussions: GroupDiscussionStore;
}

export interface Storage extends Stores {
  readonly type: 'sqlite' | 'postgres';
  /**
   * Runs `work` in one transaction: every write it makes through `tx` commits together when `work` resolves, or
   * none does when it rejects (the rejection is passed on). Until then no other reader sees any of them.
   * `work` must use only `tx`, never the storage's own stores: on SQLite those wait for the transaction to end.
   * A store call failing inside it leaves the transaction unusable on PostgreSQL: let the failure reject `work`.
   * Transactions on one SQLite connection run one after the other.
   */
  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T>;
  /** Throws when the store cannot answer; used by the readiness check. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
