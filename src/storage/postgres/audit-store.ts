import type { AuditBlock, AuditBlockRange, AuditStore } from '../audit-ports.ts';
import { AUDIT_BLOCK_COLUMNS, auditBlockValues } from '../audit-rows.ts';
import { inTransaction, type Queryable } from './transaction.ts';

/** Blocks per INSERT statement (8 parameters each, well below PostgreSQL's 65535). */
const BLOCKS_PER_STATEMENT = 500;
const COLUMNS = AUDIT_BLOCK_COLUMNS.length;

/**
 * The audit ledger's blocks in PostgreSQL (a turn's entries, one per task, in one row): insert-only (a trigger
 * refuses UPDATE, DELETE and TRUNCATE).
 */
export class PostgresAuditStore implements AuditStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async append(blocks: readonly AuditBlock[]): Promise<void> {
    if (blocks.length === 0) return;
    if (blocks.length <= BLOCKS_PER_STATEMENT) {
      await this.#insert(this.#db, blocks);
      return;
    }
    await inTransaction(this.#db, async (client) => {
      for (let i = 0; i < blocks.length; i += BLOCKS_PER_STATEMENT)
        await this.#insert(client, blocks.slice(i, i + BLOCKS_PER_STATEMENT));
    });
  }

  async #insert(target: Queryable, blocks: readonly AuditBlock[]): Promise<void> {
    const values: unknown[] = [];
    const tuples = blocks.map((block, i) => {
      values.push(...auditBlockValues(block));
      const first = i * COLUMNS;
      return `(${Array.from({ length: COLUMNS }, (_, column) => `$${first + column + 1}`).join(', ')})`;
    });
    await target.query(
      `INSERT INTO audit_blocks (${AUDIT_BLOCK_COLUMNS.join(', ')})
       VALUES ${tuples.join(', ')} ON CONFLICT (first_id) DO NOTHING`,
      values,
    );
  }

  async blocks(conversationId: string, skip: number, limit: number): Promise<AuditBlockRange> {
    if (limit <= 0) return { documents: [], skipInFirst: 0 };
    // The entries before each block from the block sizes alone; documents are read for the blocks in range only.
    const { rows } = await this.#db.query(
      `WITH sized AS (
         SELECT first_id, first_sequence, entry_count,
           sum(entry_count) OVER (ORDER BY first_sequence, first_id) - entry_count AS before
         FROM audit_blocks WHERE conversation_id = $1)
       SELECT blocks.documents, sized.before::integer AS before
       FROM sized JOIN audit_blocks blocks ON blocks.first_id = sized.first_id
       WHERE sized.before + sized.entry_count > $2 AND sized.before < $2::bigint + $3::bigint
       ORDER BY sized.first_sequence, sized.first_id`,
      [conversationId, skip, limit],
    );
    if (rows.length === 0) return { documents: [], skipInFirst: 0 };
    return { documents: rows.map((row) => row.documents as string), skipInFirst: skip - (rows[0].before as number) };
  }

  async count(conversationId: string): Promise<number> {
    const { rows } = await this.#db.query(
      'SELECT coalesce(sum(entry_count), 0)::integer AS n FROM audit_blocks WHERE conversation_id = $1',
      [conversationId],
    );
    return rows[0].n as number;
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      `SELECT documents FROM audit_blocks WHERE conversation_id = $1
       ORDER BY first_sequence DESC, first_id DESC LIMIT 1`,
      [conversationId],
    );
    return rows[0]?.documents;
  }
}
