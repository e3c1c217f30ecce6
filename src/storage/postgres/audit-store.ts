import type { AuditRow, AuditStore } from '../audit-ports.ts';
import { inTransaction, type Queryable } from './transaction.ts';

/** Rows per INSERT statement (7 parameters each, well below PostgreSQL's 65535). */
const ROWS_PER_STATEMENT = 500;

/** The audit ledger's entries in PostgreSQL: insert-only (a trigger refuses UPDATE, DELETE and TRUNCATE). */
export class PostgresAuditStore implements AuditStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async append(rows: readonly AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length <= ROWS_PER_STATEMENT) {
      await this.#insert(this.#db, rows);
      return;
    }
    await inTransaction(this.#db, async (client) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
        await this.#insert(client, rows.slice(i, i + ROWS_PER_STATEMENT));
    });
  }

  async #insert(target: Queryable, rows: readonly AuditRow[]): Promise<void> {
    const values: unknown[] = [];
    const tuples = rows.map((row, i) => {
      values.push(row.id, row.conversationId, row.sequence, row.agentId, row.agentVersion, row.timestamp, row.document);
      const p = i * 7;
      return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7})`;
    });
    await target.query(
      `INSERT INTO audit_entries (id, conversation_id, sequence, agent_id, agent_version, created_at, document)
       VALUES ${tuples.join(', ')} ON CONFLICT (id) DO NOTHING`,
      values,
    );
  }

  async list(conversationId: string, skip: number, limit: number): Promise<string[]> {
    const { rows } = await this.#db.query(
      'SELECT document FROM audit_entries WHERE conversation_id = $1 ORDER BY sequence, id LIMIT $2 OFFSET $3',
      [conversationId, limit, skip],
    );
    return rows.map((row) => row.document as string);
  }

  async count(conversationId: string): Promise<number> {
    const { rows } = await this.#db.query(
      'SELECT count(*)::integer AS n FROM audit_entries WHERE conversation_id = $1',
      [conversationId],
    );
    return rows[0].n as number;
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      'SELECT document FROM audit_entries WHERE conversation_id = $1 ORDER BY sequence DESC, id DESC LIMIT 1',
      [conversationId],
    );
    return rows[0]?.document;
  }
}
