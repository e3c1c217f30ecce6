import pg from 'pg';
import type {
  CommitOutcome,
  ConversationCommit,
  ConversationQuery,
  ConversationRow,
  ConversationStore,
  InactiveConversation,
  InactiveQuery,
  LoadedConversation,
} from '../runtime-ports.ts';
import {
  checkNewConversation,
  firstAppendedIndex,
  HEADER_COLUMNS,
  headerValues,
  toConversationRow,
} from '../runtime-rows.ts';
import { TickBatch } from './tick-batch.ts';
import { inTransaction, type Queryable } from './transaction.ts';

const HEADER = HEADER_COLUMNS.join(', ');

interface PendingCommit {
  readonly id: string;
  readonly expectedRevision: number;
  readonly change: ConversationCommit;
  readonly firstAppended: number;
}

/**
 * Conversations in PostgreSQL. `create`, `load`, `loadRow`, `commit` and `list` are single statements (one
 * round trip, atomic); `commit` takes one more query only to tell `conflict` from `not-found`. On the pool, the
 * commits of one tick share one statement (group commit: one round trip and one WAL flush for all; each caller is
 * answered once that statement has committed), and so do the header reads of one tick.
 */
export class PostgresConversationStore implements ConversationStore {
  readonly #db: Queryable;
  readonly #commits: TickBatch<PendingCommit, CommitOutcome> | undefined;
  readonly #rows: TickBatch<string, ConversationRow | undefined> | undefined;

  constructor(db: Queryable) {
    this.#db = db;
    if (db instanceof pg.Pool) {
      this.#commits = new TickBatch((commits) => this.#commitBatch(commits));
      this.#rows = new TickBatch((ids) => {
        const rows = this.#loadRows(ids);
        return ids.map((_, i) => rows.then((all) => all[i]));
      });
    }
  }

  async create(row: ConversationRow, steps: readonly string[]): Promise<void> {
    checkNewConversation(row, steps);
    await this.#db.query(
      `WITH h AS (
         INSERT INTO conversations (${HEADER})
         VALUES (${HEADER_COLUMNS.map((_, index) => `$${index + 1}`).join(', ')}))
       INSERT INTO conversation_steps (conversation_id, step_index, body)
       SELECT $1, n.ordinality - 1, n.body FROM unnest($${HEADER_COLUMNS.length + 1}::text[]) WITH ORDINALITY AS n(body, ordinality)`,
      [...headerValues(row), steps],
    );
  }

  async load(id: string): Promise<LoadedConversation | undefined> {
    return this.loadFrom(id, 0);
  }

  async loadFrom(id: string, fromIndex: number): Promise<LoadedConversation | undefined> {
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
    return this.#rows ? this.#rows.add(id) : (await this.#loadRows([id]))[0];
  }

  async #loadRows(ids: readonly string[]): Promise<Array<ConversationRow | undefined>> {
    const { rows } = await this.#db.query({
      name: 'conversation-rows',
      // Named columns: a prepared `*` would fail once a later migration adds one.
      text: `SELECT ${HEADER} FROM conversations WHERE id = ANY($1::text[])`,
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [String(row.id), toConversationRow(row)]));
    return ids.map((id) => byId.get(id));
  }

  async commit(id: string, expectedRevision: number, change: ConversationCommit): Promise<CommitOutcome> {
    const commit = { id, expectedRevision, change, firstAppended: firstAppendedIndex(id, expectedRevision, change) };
    return this.#commits ? this.#commits.add(commit) : (await this.#commitAll([commit]))[0]!;
  }

  /**
   * The commits of one tick: those of distinct conversations in one statement; a conversation named again (its
   * callers raced) is committed after that statement, on its own, in call order.
   */
  #commitBatch(commits: PendingCommit[]): Array<Promise<CommitOutcome>> {
    const together = new Map<string, PendingCommit>();
    for (const commit of commits) if (!together.has(commit.id)) together.set(commit.id, commit);
    const first = [...together.values()];
    const outcomes = this.#commitAll(first).then(
      (all) => all.map((outcome) => Promise.resolve(outcome)),
      (error: unknown) => {
        // Refused by the server, the statement committed nothing: one commit's failure (or a deadlock with another
        // instance's batch) must not fail the others, so each is tried again on its own.
        if (first.length === 1 || (error as { code?: unknown }).code === undefined) throw error;
        return first.map((commit) => this.#commitAll([commit]).then((all) => all[0]!));
      },
    );
    let previous: Promise<unknown> = outcomes;
    return commits.map((commit) => {
      const index = first.indexOf(commit);
      if (index >= 0) return outcomes.then((all) => all[index]!);
      const alone = previous.catch(() => undefined).then(() => this.#commitAll([commit]).then((all) => all[0]!));
      previous = alone;
      return alone;
    });
  }

  async #commitAll(commits: readonly PendingCommit[]): Promise<CommitOutcome[]> {
    // `h` replaces a header only at its expected revision; a concurrent commit waits on the row lock, then
    // re-checks the revision and matches nothing, so it touches no step either. `t` and `a` act only through `h`.
    // Data-modifying CTEs run in no set order: `a` reads the count of `t`, so the truncation is complete before
    // the first append (an undo followed by a new step reuses the index).
    // $1–$13: per commit its id, expected revision, new header and truncation; $14–$16: per appended step.
    const columns: unknown[][] = Array.from({ length: 16 }, () => []);
    for (const { id, expectedRevision, change, firstAppended } of commits) {
      const header = [id, expectedRevision, ...headerValues(change.row).slice(1), change.truncateStepsFrom ?? null];
      for (const [column, value] of header.entries()) columns[column]!.push(value);
      for (const [n, body] of change.appendSteps.entries()) {
        columns[13]!.push(id);
        columns[14]!.push(firstAppended + n);
        columns[15]!.push(body);
      }
    }
    const { rows } = await this.#db.query({
      name: 'conversation-commits',
      text: `WITH i AS (
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::text[],
                              $8::bigint[], $9::bigint[], $10::integer[], $11::bigint[], $12::text[], $13::integer[])
           AS i(id, expected, agent_id, agent_version, user_id, environment, state, created_on, last_modified_on,
                step_count, revision, state_json, truncate_from)),
       h AS (
         UPDATE conversations c SET
           agent_id = i.agent_id, agent_version = i.agent_version, user_id = i.user_id, environment = i.environment,
           state = i.state, created_on = i.created_on, last_modified_on = i.last_modified_on,
           step_count = i.step_count, revision = i.revision, state_json = i.state_json
         FROM i WHERE c.id = i.id AND c.revision = i.expected
         RETURNING c.id, i.truncate_from),
       t AS (
         DELETE FROM conversation_steps s USING h
         WHERE s.conversation_id = h.id AND s.step_index >= h.truncate_from
         RETURNING 1),
       a AS (
         INSERT INTO conversation_steps (conversation_id, step_index, body)
         SELECT h.id, n.step_index, n.body
         FROM h, (SELECT count(*) FROM t) AS truncated,
              unnest($14::text[], $15::integer[], $16::text[]) AS n(conversation_id, step_index, body)
         WHERE n.conversation_id = h.id)
       SELECT id FROM h`,
      values: columns,
    });
    const committed = new Set(rows.map((row) => String(row.id)));
    const missed = commits.filter((commit) => !committed.has(commit.id)).map((commit) => commit.id);
    const existing =
      missed.length === 0 ? committed : new Set((await this.#loadRows(missed)).flatMap((row) => row?.id ?? []));
    return commits.map(({ id }) => (committed.has(id) ? 'committed' : existing.has(id) ? 'conflict' : 'not-found'));
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
