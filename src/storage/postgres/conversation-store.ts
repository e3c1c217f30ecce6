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
import { inTransaction, type Queryable } from './transaction.ts';

/**
 * Conversations in PostgreSQL. `create`, `load`, `loadRow`, `commit` and `list` are single statements (one
 * round trip, atomic); `commit` takes one more query only to tell `conflict` from `not-found`.
 */
export class PostgresConversationStore implements ConversationStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async create(row: ConversationRow, steps: readonly string[]): Promise<void> {
    checkNewConversation(row, steps);
    await this.#db.query(
      `WITH h AS (
         INSERT INTO conversations
           (id, agent_id, agent_version, user_id, environment, state, created_on, last_modified_on, step_count, revision, state_json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11))
       INSERT INTO conversation_steps (conversation_id, step_index, body)
       SELECT $1, n.ordinality - 1, n.body FROM unnest($12::text[]) WITH ORDINALITY AS n(body, ordinality)`,
      [...headerValues(row), steps],
    );
  }

  async load(id: string): Promise<{ row: ConversationRow; steps: string[] } | undefined> {
    return this.loadFrom(id, 0);
  }

  async loadFrom(id: string, fromIndex: number): Promise<{ row: ConversationRow; steps: string[] } | undefined> {
    // One statement, one snapshot: the header and the steps always agree.
    const { rows } = await this.#db.query(
      `SELECT c.*, ARRAY(SELECT s.body FROM conversation_steps s
                         WHERE s.conversation_id = c.id AND s.step_index >= $2 ORDER BY s.step_index) AS steps
       FROM conversations c WHERE c.id = $1`,
      [id, fromIndex],
    );
    const row = rows[0];
    return row === undefined ? undefined : { row: toConversationRow(row), steps: row.steps as string[] };
  }

  async loadRow(id: string): Promise<ConversationRow | undefined> {
    const { rows } = await this.#db.query('SELECT * FROM conversations WHERE id = $1', [id]);
    return rows[0] === undefined ? undefined : toConversationRow(rows[0]);
  }

  async commit(id: string, expectedRevision: number, change: ConversationCommit): Promise<CommitOutcome> {
    const first = firstAppendedIndex(id, expectedRevision, change);
    // `h` replaces the header only at the expected revision; a concurrent commit waits on the row lock, then
    // re-checks the revision and matches nothing, so it touches no step either. `t` and `a` act only through `h`.
    // Data-modifying CTEs run in no set order: `a` reads the count of `t`, so the truncation is complete before
    // the first append (an undo followed by a new step reuses the index).
    const { rows } = await this.#db.query(
      `WITH h AS (
         UPDATE conversations SET
           agent_id = $3, agent_version = $4, user_id = $5, environment = $6, state = $7, created_on = $8,
           last_modified_on = $9, step_count = $10, revision = $11, state_json = $12
         WHERE id = $1 AND revision = $2
         RETURNING id),
       t AS (
         DELETE FROM conversation_steps s USING h
         WHERE s.conversation_id = h.id AND s.step_index >= $13::integer
         RETURNING 1),
       a AS (
         INSERT INTO conversation_steps (conversation_id, step_index, body)
         SELECT h.id, $14::integer + n.ordinality - 1, n.body
         FROM h, (SELECT count(*) FROM t) AS truncated, unnest($15::text[]) WITH ORDINALITY AS n(body, ordinality))
       SELECT count(*)::integer AS matched FROM h`,
      [
        id,
        expectedRevision,
        ...headerValues(change.row).slice(1),
        change.truncateStepsFrom ?? null,
        first,
        change.appendSteps,
      ],
    );
    if (rows[0].matched === 1) return 'committed';
    const found = await this.#db.query('SELECT 1 FROM conversations WHERE id = $1', [id]);
    return found.rowCount === 0 ? 'not-found' : 'conflict';
  }

  async list(query: ConversationQuery): Promise<ConversationRow[]> {
    // Unnamed statements are planned with their values, so the unused filters fold away and the indexes apply.
    const { rows } = await this.#db.query(
      `SELECT * FROM conversations
       WHERE ($1::text IS NULL OR agent_id = $1)
         AND ($2::integer IS NULL OR agent_version = $2)
         AND ($3::text IS NULL OR user_id = $3)
         AND ($4::text IS NULL OR state = $4)
         AND ($5::text IS NULL OR environment = $5)
       ORDER BY last_modified_on DESC, id DESC
       LIMIT $6 OFFSET $7`,
      [
        query.agentId ?? null,
        query.agentVersion ?? null,
        query.userId ?? null,
        query.state ?? null,
        query.environment ?? null,
        query.limit,
        query.index * query.limit,
      ],
    );
    return rows.map(toConversationRow);
  }

  async listInactive(query: InactiveQuery): Promise<InactiveConversation[]> {
    const { rows } = await this.#db.query(
      `SELECT id, last_modified_on FROM conversations
       WHERE last_modified_on < $1 AND (state = 'ENDED') = $2::boolean AND (last_modified_on, id) > ($3::bigint, $4::text)
       ORDER BY last_modified_on, id LIMIT $5`,
      [query.before, query.ended, query.after?.lastModifiedOn ?? -1, query.after?.id ?? '', query.limit],
    );
    return rows.map((row) => ({ id: String(row.id), lastModifiedOn: Number(row.last_modified_on) }));
  }

  async delete(id: string): Promise<boolean> {
    // Two statements: deleting the header first waits for an in-flight commit; the steps are then deleted
    // with a fresh snapshot that includes that commit's steps (one statement would leave them behind).
    return inTransaction(this.#db, async (client) => {
      const { rowCount } = await client.query('DELETE FROM conversations WHERE id = $1', [id]);
      if (rowCount === 0) return false;
      await client.query('DELETE FROM conversation_steps WHERE conversation_id = $1', [id]);
      return true;
    });
  }
}

/** The header columns in table order ($1 = id ... $11 = state_json). */
function headerValues(row: ConversationRow): Array<string | number> {
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
