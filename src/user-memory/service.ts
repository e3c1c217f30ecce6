import { AppError, invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  MEMORY_CATEGORIES,
  MEMORY_VISIBILITIES,
  memoryOwner,
  type MemoryCategory,
  type MemoryUser,
  type MemoryVisibility,
  type MemoryWrite,
  type UserMemoryEntry,
  type UserMemoryStore,
} from '../storage/user-memory-ports.ts';
import type { UserMemorySettings } from './config.ts';

/**
 * Persistent user memory: facts about a user kept across conversations and agents. Who sees an entry:
 * `global` — every agent of the user; `self` — the agent that wrote it; `group` — that agent and every agent taking
 * part in a group discussion named in the entry's `groupIds`. Agents write through the memory tools (rules of the
 * agent's `userMemoryConfig`), people and programs through the REST API.
 */

/** An agent reading or writing a user's memory in one conversation. */
export interface MemoryReader {
  readonly userId: string;
  readonly agentId: string;
  /** The group discussion the conversation takes part in, if any (set by the group service, never by a client). */
  readonly groupId?: string | undefined;
  readonly conversationId?: string | undefined;
}

/** A fact a model asks to remember. */
export interface FactRequest {
  readonly key: string;
  readonly value: string;
  readonly category?: string | undefined;
  readonly visibility?: string | undefined;
}

/** A write the model asked for that the agent's rules refuse; its message is for the model. */
export class MemoryRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryRefusal';
  }
}

/** Filters of a REST listing; all optional, combined with AND. */
export interface MemoryFilter {
  readonly category?: string | undefined;
  readonly visibility?: string | undefined;
  readonly key?: string | undefined;
  /** Entries written by this agent. */
  readonly sourceAgentId?: string | undefined;
  /** Every term in the key or the value (`matchesQuery`). */
  readonly query?: string | undefined;
}

/** The REST rules for a written entry (the original's): longer keys and values than the tools allow by default. */
const MAX_KEY_LENGTH = 255;
const MAX_VALUE_JSON = 64 * 1024;

export function visibleTo(entry: UserMemoryEntry, reader: Pick<MemoryReader, 'agentId' | 'groupId'>): boolean {
  if (entry.visibility === 'global') return true;
  if (entry.sourceAgentId === reader.agentId) return true;
  return entry.visibility === 'group' && reader.groupId !== undefined && entry.groupIds.includes(reader.groupId);
}

/**
 * Every term of the query (split on anything that is not a letter or digit) occurs, ignoring case, in the key or in
 * the value: "dog name", "dog_name" and "dog-name" all find `dog_name`. A query without terms matches nothing.
 */
export function matchesQuery(entry: UserMemoryEntry, query: string): boolean {
  const terms = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (terms.length === 0) return false;
  const text = `${entry.key}\n${typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value)}`;
  const haystack = text.toLowerCase();
  return terms.every((term) => haystack.includes(term));
}

function byRecallOrder(order: UserMemorySettings['recallOrder']) {
  return (a: UserMemoryEntry, b: UserMemoryEntry) =>
    (order === 'most_accessed' ? b.accessCount - a.accessCount : 0) || b.updatedAt - a.updatedAt;
}

export class UserMemoryService {
  readonly #store: UserMemoryStore;
  readonly #clock: () => number;

  constructor(store: UserMemoryStore, clock: () => number = Date.now) {
    this.#store = store;
    this.#clock = clock;
  }

  // --- what agents do (the memory tools) ---------------------------------------------------------------------

  /** The entries the reader sees, in recall order, at most `maxRecallEntries`; each counts as accessed. */
  async recall(reader: MemoryReader, settings: UserMemorySettings, query?: string): Promise<UserMemoryEntry[]> {
    const entries = (await this.#store.list(reader.userId))
      .filter((entry) => visibleTo(entry, reader) && (query === undefined || matchesQuery(entry, query)))
      .sort(byRecallOrder(settings.recallOrder))
      .slice(0, settings.maxRecallEntries);
    await this.#store.countAccess(entries.map((entry) => entry.id));
    return entries;
  }

  /** The write a fact asks for under the agent's rules (no store involved); throws `MemoryRefusal` naming the rule. */
  factWrite(reader: MemoryReader, fact: FactRequest, settings: UserMemorySettings): MemoryWrite {
    const key = fact.key.trim();
    if (key === '') throw new MemoryRefusal('The key is empty.');
    if (key.length > settings.maxKeyLength)
      throw new MemoryRefusal(`The key is longer than ${settings.maxKeyLength} characters.`);
    if (fact.value.length > settings.maxValueLength)
      throw new MemoryRefusal(`The value is longer than ${settings.maxValueLength} characters.`);
    const category = (fact.category?.trim() || 'fact') as MemoryCategory;
    if (!settings.allowedCategories.has(category))
      throw new MemoryRefusal(
        `The category '${category}' is not allowed; use one of ${[...settings.allowedCategories].join(', ')}.`,
      );
    let visibility = (fact.visibility?.trim() || settings.defaultVisibility) as MemoryVisibility;
    if (!settings.allowedVisibilities.has(visibility))
      throw new MemoryRefusal(
        `The visibility '${visibility}' is not allowed; use one of ${[...settings.allowedVisibilities].join(', ')}.`,
      );
    // Without a group no reader could match a group entry: it stays private to the agent instead.
    if (visibility === 'group' && reader.groupId === undefined) visibility = 'self';

    return {
      userId: reader.userId,
      key,
      value: fact.value,
      category,
      visibility,
      sourceAgentId: reader.agentId,
      groupIds: visibility === 'group' ? [reader.groupId!] : [],
      sourceConversationId: reader.conversationId,
    };
  }

  /**
   * Stores a fact (checked by `factWrite`) under the agent's rules; answers the entry and whether anything was
   * written (re-stating an unchanged fact writes nothing). Throws `MemoryRefusal` when the rules refuse it.
   */
  async remember(
    reader: MemoryReader,
    write: MemoryWrite,
    settings: UserMemorySettings,
  ): Promise<{ entry: UserMemoryEntry; written: boolean }> {
    const { key, visibility } = write;
    const entries = await this.#store.list(reader.userId);
    const owner = memoryOwner(write);
    const existing = entries.find((entry) => entry.key === key && memoryOwner(entry) === owner);
    if (
      existing &&
      visibility === 'global' &&
      existing.sourceAgentId !== reader.agentId &&
      !settings.allowGlobalKeyOverwrite
    )
      throw new MemoryRefusal(
        `The shared fact '${key}' was written by another agent and may not be replaced; use another key or the visibility 'self'.`,
      );
    if (
      existing &&
      existing.value === write.value &&
      existing.category === write.category &&
      existing.visibility === write.visibility &&
      existing.sourceAgentId === write.sourceAgentId &&
      JSON.stringify(existing.groupIds) === JSON.stringify(write.groupIds)
    )
      return { entry: existing, written: false };
    if (!existing) await this.#makeRoom(reader, entries, settings);
    const entry = await this.#store.upsert(write, newId(this.#clock()), this.#clock());
    if (!existing) await this.#holdCap(reader, entry, settings);
    return { entry, written: true };
  }

  /** Forgets the reader's own entry under `key` and the shared one it may replace; answers how many were removed. */
  async forget(reader: MemoryReader, key: string, settings: UserMemorySettings): Promise<number> {
    const entries = (await this.#store.list(reader.userId)).filter((entry) => entry.key === key.trim());
    let removed = 0;
    for (const entry of entries) {
      const own = entry.sourceAgentId === reader.agentId;
      const mayRemove = entry.visibility === 'global' ? own || settings.allowGlobalKeyOverwrite : own;
      if (mayRemove && (await this.#store.delete(entry.id))) removed++;
    }
    return removed;
  }

  /** Before a new entry: at the cap, `reject` refuses, `evict_oldest` removes this agent's oldest entries. */
  async #makeRoom(reader: MemoryReader, entries: UserMemoryEntry[], settings: UserMemorySettings): Promise<void> {
    const excess = entries.length - settings.maxEntriesPerUser + 1;
    if (excess <= 0) return;
    if (settings.onCapReached === 'reject')
      throw new MemoryRefusal(`This user already has ${entries.length} remembered facts, the most allowed.`);
    const own = entries
      .filter((entry) => entry.sourceAgentId === reader.agentId)
      .sort((a, b) => a.updatedAt - b.updatedAt);
    if (own.length < excess)
      throw new MemoryRefusal(
        `This user already has ${entries.length} remembered facts, the most allowed, and too few of them are this agent's to make room.`,
      );
    for (const entry of own.slice(0, excess)) await this.#store.delete(entry.id);
  }

  /**
   * After a new entry: another conversation of the same user may have added one at the same moment. Over the cap,
   * `reject` takes the new entry back; `evict_oldest` removes one more of this agent's oldest.
   */
  async #holdCap(reader: MemoryReader, added: UserMemoryEntry, settings: UserMemorySettings): Promise<void> {
    const entries = await this.#store.list(reader.userId);
    if (entries.length <= settings.maxEntriesPerUser) return;
    if (settings.onCapReached === 'reject') {
      await this.#store.delete(added.id);
      throw new MemoryRefusal(
        `This user already has ${settings.maxEntriesPerUser} remembered facts, the most allowed.`,
      );
    }
    const oldest = entries
      .filter((entry) => entry.sourceAgentId === reader.agentId && entry.id !== added.id)
      .sort((a, b) => a.updatedAt - b.updatedAt)
      .slice(0, entries.length - settings.maxEntriesPerUser);
    for (const entry of oldest) await this.#store.delete(entry.id);
  }

  // --- what people and programs do (REST) ----------------------------------------------------------------------

  async list(userId: string, filter: MemoryFilter = {}): Promise<UserMemoryEntry[]> {
    const key = filter.key?.trim();
    return (await this.#store.list(userId)).filter(
      (entry) =>
        (filter.category === undefined || entry.category === filter.category) &&
        (filter.visibility === undefined || entry.visibility === filter.visibility) &&
        (key === undefined || entry.key === key) &&
        (filter.sourceAgentId === undefined || entry.sourceAgentId === filter.sourceAgentId) &&
        (filter.query === undefined || matchesQuery(entry, filter.query)),
    );
  }

  /** The entries an agent would see (without counting an access). */
  async visible(reader: MemoryReader, order: UserMemorySettings['recallOrder'], limit: number) {
    return (await this.#store.list(reader.userId))
      .filter((entry) => visibleTo(entry, reader))
      .sort(byRecallOrder(order))
      .slice(0, limit);
  }

  /** One entry of the user; a 404 when it does not exist or belongs to another user. */
  async get(userId: string, entryId: string): Promise<UserMemoryEntry> {
    const entry = await this.#store.get(entryId);
    if (entry === undefined || entry.userId !== userId)
      throw new AppError('not-found', `No memory entry ${entryId} for user '${userId}'.`);
    return entry;
  }

  /** The entry by id alone (the original's `DELETE /entry/{id}`); undefined when unknown. */
  find(entryId: string): Promise<UserMemoryEntry | undefined> {
    return this.#store.get(entryId);
  }

  async delete(userId: string, entryId: string): Promise<void> {
    await this.get(userId, entryId);
    await this.#store.delete(entryId);
  }

  /** Erasure of every memory entry of the user; answers how many. */
  deleteAll(userId: string): Promise<number> {
    return this.#store.deleteAll(userId);
  }

  users(index: number, limit: number): Promise<MemoryUser[]> {
    return this.#store.users(index, limit);
  }

  /** Inserts or replaces an entry given through the REST API, after the write rules (400 naming the problem). */
  async put(body: {
    userId: string;
    key: string;
    value: unknown;
    category?: string | undefined;
    visibility: string;
    sourceAgentId?: string | undefined;
    groupIds?: readonly string[] | undefined;
    sourceConversationId?: string | undefined;
  }): Promise<UserMemoryEntry> {
    const key = body.key.trim();
    if (body.userId.trim() === '') throw invalid('userId is empty.', { path: '$.userId' });
    if (key === '' || key.length > MAX_KEY_LENGTH)
      throw invalid(`key must have 1 to ${MAX_KEY_LENGTH} characters.`, { path: '$.key' });
    if (body.value === undefined) throw invalid('value is missing.', { path: '$.value' });
    if (JSON.stringify(body.value).length > MAX_VALUE_JSON)
      throw invalid(`value is longer than ${MAX_VALUE_JSON} characters of JSON.`, { path: '$.value' });
    const category = body.category ?? 'fact';
    if (!(MEMORY_CATEGORIES as readonly string[]).includes(category))
      throw invalid(`category must be one of ${MEMORY_CATEGORIES.join(', ')}.`, { path: '$.category' });
    if (!(MEMORY_VISIBILITIES as readonly string[]).includes(body.visibility))
      throw invalid(`visibility must be one of ${MEMORY_VISIBILITIES.join(', ')}.`, { path: '$.visibility' });
    const sourceAgentId = body.sourceAgentId?.trim() || undefined;
    if (body.visibility !== 'global' && sourceAgentId === undefined)
      throw invalid(`A ${body.visibility} entry needs a sourceAgentId: without it no agent could read it.`, {
        path: '$.sourceAgentId',
      });
    const groupIds = (body.groupIds ?? []).map((id) => id.trim()).filter(Boolean);
    if (body.visibility === 'group' && groupIds.length === 0)
      throw invalid('A group entry needs groupIds: without them no group could read it.', { path: '$.groupIds' });
    return this.#store.upsert(
      {
        userId: body.userId,
        key,
        value: body.value,
        category: category as MemoryCategory,
        visibility: body.visibility as MemoryVisibility,
        sourceAgentId,
        groupIds,
        sourceConversationId: body.sourceConversationId,
      },
      newId(this.#clock()),
      this.#clock(),
    );
  }

  /** Retention: removes entries last written before `cutoff` (epoch milliseconds); answers how many. */
  deleteWrittenBefore(cutoff: number): Promise<number> {
    return this.#store.deleteOlderThan(cutoff);
  }
}
