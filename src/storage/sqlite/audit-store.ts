import type { DatabaseSync } from 'node:sqlite';
import type { AuditBlock, AuditBlockRange, AuditStore } from '../audit-ports.ts';
import { AUDIT_BLOCK_COLUMNS, auditBlockValues } from '../audit-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  insert: `INSERT OR IGNORE INTO audit_blocks (${AUDIT_BLOCK_COLUMNS.join(', ')})
    VALUES (${AUDIT_BLOCK_COLUMNS.map(() => '?').join(', ')})`,
  sizes: `SELECT first_sequence, first_id, entry_count FROM audit_blocks WHERE conversation_id = ?
    ORDER BY first_sequence, first_id`,
  from: `SELECT documents, entry_count FROM audit_blocks WHERE conversation_id = ? AND (first_sequence, first_id) >= (?, ?)
    ORDER BY first_sequence, first_id`,
  count: 'SELECT coalesce(sum(entry_count), 0) AS n FROM audit_blocks WHERE conversation_id = ?',
  // Blocks hold consecutive sequences and never overlap: the last block holds the highest sequence.
  latest: `SELECT documents FROM audit_blocks WHERE conversation_id = ?
    ORDER BY first_sequence DESC, first_id DESC LIMIT 1`,
};

/** About half a millisecond of inserts: a turn's block is a couple of kilobytes. */
const BLOCKS_PER_WRITE = 16;

/**
 * The audit ledger's blocks in SQLite (a turn's entries, one per task, in one row: one row and two index entries a
 * turn). Insert-only: triggers refuse UPDATE and DELETE (see the migration).
 */
export class SqliteAuditStore extends SqliteStore<keyof typeof STATEMENTS> implements AuditStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  /**
   * Writes the blocks `BLOCKS_PER_WRITE` at a time, each slice a write of its own, so the group commit can spread a
   * large flush over several transactions with the event loop running between them. A failed append may have
   * written some slices; appending the same blocks again skips those (a block's first id is unique).
   */
  async append(blocks: readonly AuditBlock[]): Promise<void> {
    const slices: Promise<void>[] = [];
    for (let start = 0; start < blocks.length; start += BLOCKS_PER_WRITE) {
      const slice = blocks.slice(start, start + BLOCKS_PER_WRITE);
      slices.push(this.write(() => this.#insert(slice)));
    }
    await Promise.all(slices);
  }

  #insert(blocks: readonly AuditBlock[]): void {
    for (const block of blocks) this.sql.insert.run(...auditBlockValues(block));
  }

  async blocks(conversationId: string, skip: number, limit: number): Promise<AuditBlockRange> {
    if (limit <= 0) return { documents: [], skipInFirst: 0 };
    // Finds the block holding entry number `skip` from the block sizes alone, then reads documents from there.
    let before = 0;
    let start: { first_sequence: unknown; first_id: unknown } | undefined;
    for (const block of this.sql.sizes.iterate(conversationId)) {
      const size = Number(block.entry_count);
      if (before + size > skip) {
        start = block as typeof start;
        break;
      }
      before += size;
    }
    if (start === undefined) return { documents: [], skipInFirst: 0 };
    const skipInFirst = skip - before;
    const documents: string[] = [];
    let entries = 0;
    for (const block of this.sql.from.iterate(
      conversationId,
      start.first_sequence as number,
      start.first_id as string,
    )) {
      documents.push(String(block.documents));
      entries += Number(block.entry_count);
      if (entries >= skipInFirst + limit) break;
    }
    return { documents, skipInFirst };
  }

  async count(conversationId: string): Promise<number> {
    return Number(this.sql.count.get(conversationId)?.n ?? 0);
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const row = this.sql.latest.get(conversationId);
    return row === undefined ? undefined : String(row.documents);
  }
}
