import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  CommitOutcome,
  ConversationCommit,
  ConversationQuery,
  ConversationRow,
  ConversationStore,
  InactiveConversation,
  InactiveQuery,
  LoadedConversation,
  StoredStepText,
} from '../runtime-ports.ts';
import {
  checkNewConversation,
  firstAppendedIndex,
  HEADER_COLUMNS,
  headerValues,
  toConversationRow,
} from '../runtime-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';
import { readTransaction } from './transaction.ts';

/** `ConversationQuery` filters and their columns; a listing statement is prepared per combination in use. */
const FILTERS = [
  ['agentId', 'agent_id'],
  ['agentVersion', 'agent_version'],
  ['userId', 'user_id'],
  ['state', 'state'],
  ['environment', 'environment'],
] as const;

/**
 * A conversation's steps, newest first: each step row names the one before it (`previous_step`, its rowid) and the
 * header the latest (`last_step`), so finding them takes no index of its own (see the migration that made it so).
 * From `:last` back to index `:from`; the condition on `step_index` makes each step's predecessor the one just
 * before it, and ends the walk even over a damaged chain.
 */
const CHAIN = `WITH RECURSIVE chain (step_id, step_index, previous_step) AS (
    SELECT rowid, step_index, previous_step FROM conversation_steps WHERE rowid = :last
    UNION ALL
    SELECT step.rowid, step.step_index, step.previous_step
    FROM chain JOIN conversation_steps AS step ON step.rowid = chain.previous_step
    WHERE chain.step_index > :from AND step.step_index = chain.step_index - 1
  )`;

const STATEMENTS = {
  // The header is written with positional parameters (`headerValues`): node:sqlite binds named ones by looking each
  // name up, 3.5 µs more a run of a statement of this size, at every turn's commit.
  insertHeader: `INSERT INTO conversations (${HEADER_COLUMNS.join(', ')}, last_step)
    VALUES (${HEADER_COLUMNS.map(() => '?').join(', ')}, ?)`,
  updateHeader: `UPDATE conversations SET ${HEADER_COLUMNS.slice(1)
    .map((column) => `${column} = ?`)
    .join(', ')}, last_step = ?
    WHERE id = ? AND revision = ?`,
  /** The latest step of the conversation at the revision a commit names. */
  lastStepAt: 'SELECT last_step FROM conversations WHERE id = ? AND revision = ?',
  insertStep: 'INSERT INTO conversation_steps (conversation_id, step_index, body, previous_step) VALUES (?, ?, ?, ?)',
  stepsFromLast: `${CHAIN} SELECT step_id, step_index, previous_step FROM chain WHERE step_index >= :from`,
  deleteStep: 'DELETE FROM conversation_steps WHERE rowid = ?',
  header: 'SELECT * FROM conversations WHERE id = ?',
  /** The bodies as BLOBs: their UTF-8 bytes, each in an array buffer of its own, not decoded into strings. */
  steps: `${CHAIN} SELECT chain.step_index, CAST(step.body AS BLOB) AS body FROM chain JOIN conversation_steps AS step ON step.rowid = chain.step_id
    WHERE chain.step_index >= :from AND chain.step_index < :to`,
  lastStep: 'SELECT last_step FROM conversations WHERE id = ?',
  exists: 'SELECT 1 AS found FROM conversations WHERE id = ?',
  deleteHeader: 'DELETE FROM conversations WHERE id = ? RETURNING last_step',
  inactive: `SELECT id, last_modified_on FROM conversations
    WHERE last_modified_on < :before AND (state = 'ENDED') = :ended
      AND (last_modified_on, id) > (:afterModified, :afterId)
    ORDER BY last_modified_on, id LIMIT :limit`,
};

/** Conversations in SQLite. Every statement is prepared once per store; writes run in one transaction. */
export class SqliteConversationStore extends SqliteStore<keyof typeof STATEMENTS> implements ConversationStore {
  /** Listing statements by the bit mask of the filters they apply (at most 32). */
  readonly #listings = new Map<number, StatementSync>();

  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async create(row: ConversationRow, steps: readonly string[]): Promise<void> {
    checkNewConversation(row, steps);
    await this.write(() => {
      let lastStep: number | null = null;
      for (const [index, body] of steps.entries()) lastStep = this.#appendStep(row.id, index, body, lastStep);
      this.sql.insertHeader.run(...headerValues(row), lastStep);
    });
  }

  async load(id: string): Promise<LoadedConversation | undefined> {
    return this.loadFrom(id, 0);
  }

  async loadFrom(id: string, fromIndex: number): Promise<LoadedConversation | undefined> {
    return readTransaction(this.db, () => {
      const header = this.sql.header.get(id);
      if (header === undefined) return undefined;
      return {
        row: toConversationRow(header),
        steps: this.#stepTexts(header.last_step, fromIndex, Number.MAX_SAFE_INTEGER),
      };
    });
  }

  async loadLatest(id: string, count: number): Promise<LoadedConversation | undefined> {
    return readTransaction(this.db, () => {
      const header = this.sql.header.get(id);
      if (header === undefined) return undefined;
      const row = toConversationRow(header);
      return { row, steps: this.#stepTexts(header.last_step, Math.max(0, row.stepCount - count), row.stepCount) };
    });
  }

  readStepsNow(id: string, fromIndex: number, toIndex: number): StoredStepText[] | undefined {
    return readTransaction(this.db, () => {
      const header = this.sql.lastStep.get(id);
      return header === undefined ? undefined : this.#stepTexts(header.last_step, fromIndex, toIndex);
    });
  }

  /** The texts of the steps from `fromIndex` to `toIndex` (excluded) of the chain ending at step row `last`. */
  #stepTexts(last: unknown, fromIndex: number, toIndex: number): Uint8Array[] {
    // In index order (the walk goes newest first); sorted here, not by SQLite, which would copy the bodies again.
    return this.sql.steps
      .all({ last: last as number | null, from: fromIndex, to: toIndex })
      .sort((a, b) => Number(a.step_index) - Number(b.step_index))
      .map((step) => step.body as Uint8Array);
  }

  async loadRow(id: string): Promise<ConversationRow | undefined> {
    const header = this.sql.header.get(id);
    return header === undefined ? undefined : toConversationRow(header);
  }

  async commit(id: string, expectedRevision: number, change: ConversationCommit): Promise<CommitOutcome> {
    const first = firstAppendedIndex(id, expectedRevision, change);
    return this.write(() => {
      const current = this.sql.lastStepAt.get(id, expectedRevision);
      if (current === undefined) return this.sql.exists.get(id) === undefined ? 'not-found' : 'conflict';
      let lastStep = current.last_step as number | null;
      if (change.truncateStepsFrom !== undefined) lastStep = this.#deleteSteps(lastStep, change.truncateStepsFrom);
      for (const [offset, body] of change.appendSteps.entries())
        lastStep = this.#appendStep(id, first + offset, body, lastStep);
      this.sql.updateHeader.run(...headerValues(change.row).slice(1), lastStep, id, expectedRevision);
      return 'committed';
    });
  }

  async list(query: ConversationQuery): Promise<ConversationRow[]> {
    let mask = 0;
    const parameters: Record<string, string | number> = { limit: query.limit, offset: query.index * query.limit };
    for (const [bit, [key]] of FILTERS.entries()) {
      const value = query[key];
      if (value === undefined) continue;
      mask |= 1 << bit;
      parameters[key] = value;
    }
    return this.#listing(mask).all(parameters).map(toConversationRow);
  }

  async delete(id: string): Promise<boolean> {
    return this.write(() => {
      const header = this.sql.deleteHeader.get(id);
      if (header === undefined) return false;
      this.#deleteSteps(header.last_step as number | null, 0);
      return true;
    });
  }

  async listInactive(query: InactiveQuery): Promise<InactiveConversation[]> {
    return this.sql.inactive
      .all({
        before: query.before,
        ended: query.ended ? 1 : 0,
        afterModified: query.after?.lastModifiedOn ?? -1,
        afterId: query.after?.id ?? '',
        limit: query.limit,
      })
      .map((row) => ({ id: String(row.id), lastModifiedOn: Number(row.last_modified_on) }));
  }

  /** Appends a step after `previous` (a rowid, null for the first step) and answers its rowid. */
  #appendStep(id: string, index: number, body: string, previous: number | null): number {
    return Number(this.sql.insertStep.run(id, index, body, previous).lastInsertRowid);
  }

  /** Deletes the steps from index `from` on, back from `lastStep`; answers the latest step left (null: none). */
  #deleteSteps(lastStep: number | null, from: number): number | null {
    if (lastStep === null) return null;
    let left: number | null = lastStep;
    for (const step of this.sql.stepsFromLast.all({ last: lastStep, from })) {
      this.sql.deleteStep.run(step.step_id as number);
      if (Number(step.step_index) === from) left = step.previous_step as number | null;
    }
    return left;
  }

  #listing(mask: number): StatementSync {
    let statement = this.#listings.get(mask);
    if (statement === undefined) {
      const conditions = FILTERS.filter((_, bit) => (mask & (1 << bit)) !== 0).map(
        ([key, column]) => `${column} = :${key}`,
      );
      statement = this.db.prepare(`SELECT * FROM conversations
        ${conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`}
        ORDER BY last_modified_on DESC, id DESC
        LIMIT :limit OFFSET :offset`);
      this.#listings.set(mask, statement);
    }
    return statement;
  }
}
