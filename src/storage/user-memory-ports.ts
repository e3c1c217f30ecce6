/**
 * Persistent user memory (`src/user-memory/`): facts about a user kept across conversations and agents, each entry
 * with its visibility among the user's agents. The rules (who sees what, caps, guardrails) live in the service; the
 * store keeps entries and answers per user.
 */

export const MEMORY_VISIBILITIES = ['self', 'group', 'global'] as const;
export type MemoryVisibility = (typeof MEMORY_VISIBILITIES)[number];

export const MEMORY_CATEGORIES = ['preference', 'fact', 'context', 'legacy', 'property'] as const;
export type MemoryCategory = (typeof MEMORY_CATEGORIES)[number];

/** What is written: the identity is (userId, key, owner), where a `global` entry has no owner and the others belong to `sourceAgentId`. */
export interface MemoryWrite {
  readonly userId: string;
  readonly key: string;
  /** Any JSON value. */
  readonly value: unknown;
  readonly category: MemoryCategory;
  readonly visibility: MemoryVisibility;
  readonly sourceAgentId?: string | undefined;
  readonly groupIds: readonly string[];
  readonly sourceConversationId?: string | undefined;
}

export interface UserMemoryEntry extends MemoryWrite {
  readonly id: string;
  /** How often a recall handed it to a model. */
  readonly accessCount: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface MemoryUser {
  readonly userId: string;
  readonly entries: number;
  readonly lastUpdatedAt: number;
}

/** The owner part of an entry's identity: none for `global`, else the agent that wrote it. */
export function memoryOwner(entry: Pick<MemoryWrite, 'visibility' | 'sourceAgentId'>): string {
  return entry.visibility === 'global' ? '' : (entry.sourceAgentId ?? '');
}

export interface UserMemoryStore {
  /** Every entry of a user, most recently updated first. */
  list(userId: string): Promise<UserMemoryEntry[]>;
  get(id: string): Promise<UserMemoryEntry | undefined>;
  /**
   * Inserts the entry, or replaces the value, category, visibility, groups, source agent and conversation of the one
   * with the same identity (its id, creation time and access count stay). `id` is used for a new entry.
   */
  upsert(entry: MemoryWrite, id: string, now: number): Promise<UserMemoryEntry>;
  delete(id: string): Promise<boolean>;
  /** Removes every entry of a user; answers how many. */
  deleteAll(userId: string): Promise<number>;
  /** Adds one to the access count of each entry. */
  countAccess(ids: readonly string[]): Promise<void>;
  /** Retention sweep: removes entries last written before `cutoff`; answers how many. */
  deleteOlderThan(cutoff: number): Promise<number>;
  /** Users with entries, by user id, a page at a time (skip = index * limit). */
  users(index: number, limit: number): Promise<MemoryUser[]>;
}
