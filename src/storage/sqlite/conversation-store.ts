import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  CommitOutcome,
  ConversationCommit,
  ConversationQuery,
  ConversationRow,
  ConversationStore,
  InactiveConversation,
  InactiveQuery,
} from '../runtime-ports.ts';
import { checkNewConversation, firstAppendedIndex, toConversationRow } from '../runtime-rows.ts';
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

const STATEMENTS = {
  insertHeader: `INSERT INTO conversations
    (id, agent_id, agent_version, user_id, environment, state, created_on, last_modified_on, step_count, revision, state_json)
    VALUES (:id, :agentId, :agentVersion, :userId, :environment, :state, :createdOn, :lastModifiedOn, :stepCount, :revision, :stateJson)`,
  updateHeader: `UPDATE conversations SET
      agent_id = :agentId, agent_version = :agentVersion, user_id = :userId, environment = :environment, state = :state,
      created_on = :createdOn, last_modified_on = :lastModifiedOn, step_count = :stepCount, revision = :revision,
      state_json = :stateJson
    WHERE id = :id AND revision = :expectedRevision`,
  insertStep: 'INSERT INTO conversation_steps (conversation_id, step_index, body) VALUES (?, ?, ?)',
  truncateSteps: 'DELETE FROM conversation_steps WHERE conversation_id = ? AND step_index >= ?',
  header: 'SELECT * FROM conversations WHERE id = ?',
  steps: 'SELECT body FROM conversation_steps WHERE conversation_id = ? AND step_index >= ? ORDER BY step_index',
  exists: 'SELECT 1 AS found FROM conversations WHERE id = ?',
  deleteSteps: 'DELETE FROM conversation_steps WHERE conversation_id = ?',
  deleteHeader: 'DELETE FROM conversations WHERE id = ?',
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
      this.sql.insertHeader.run(headerParameters(row));
      for (const [index, body] of steps.entries()) this.sql.insertStep.run(row.id, index, body);
    });
  }

  async load(id: string): Promise<{ row: ConversationRow; steps: string[] } | undefined> {
    return this.loadFrom(id, 0);
  }

  async loadFrom(id: string, fromIndex: number): Promise<{ row: ConversationRow; steps: string[] } | undefined> {
    return readTransaction(this.db, () => {
      const header = this.sql.header.get(id);
      if (header === undefined) return undefined;
      const steps = this.sql.steps.all(id, fromIndex).map((step) => String(step.body));
      return { row: toConversationRow(header), steps };
    });
  }

  async loadRow(id: string): Promise<ConversationRow | undefined> {
    const header = this.sql.header.get(id);
    return header === undefined ? undefined : toConversationRow(header);
  }

  async commit(id: string, expectedRevision: number, change: ConversationCommit): Promise<CommitOutcome> {
    const first = firstAppendedIndex(id, expectedRevision, change);
    return this.write(() => {
      const updated = this.sql.updateHeader.run({ ...headerParameters(change.row), expectedRevision });
      if (Number(updated.changes) === 0) return this.sql.exists.get(id) === undefined ? 'not-found' : 'conflict';
      if (change.truncateStepsFrom !== undefined) this.sql.truncateSteps.run(id, change.truncateStepsFrom);
      for (const [offset, body] of change.appendSteps.entries()) this.sql.insertStep.run(id, first + offset, body);
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
      this.sql.deleteSteps.run(id);
      return Number(this.sql.deleteHeader.run(id).changes) > 0;
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

function headerParameters(row: ConversationRow): Record<string, string | number> {
  return {
    id: row.id,
    agentId: row.agentId,
    agentVersion: row.agentVersion,
    userId: row.userId,
    environment: row.environment,
    state: row.state,
    createdOn: row.createdOn,
    lastModifiedOn: row.lastModifiedOn,
    stepCount: row.stepCount,
    revision: row.revision,
    stateJson: row.stateJson,
  };
}
