import type { DatabaseSync } from 'node:sqlite';
import type { AuditRow, AuditStore } from '../audit-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  insert: `INSERT OR IGNORE INTO audit_blocks
    (first_id, conversation_id, first_sequence, entry_count, agent_id, agent_version, created_at, documents)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  sizes: `SELECT first_sequence, first_id, entry_count FROM audit_blocks WHERE conversation_id = ?
    ORDER BY first_sequence, first_id`,
  from: `SELECT documents FROM audit_blocks WHERE conversation_id = ? AND (first_sequence, first_id) >= (?, ?)
    ORDER BY first_sequence, first_id`,
  count: 'SELECT coalesce(sum(entry_count), 0) AS n FROM audit_blocks WHERE conversation_id = ?',
  // Blocks hold consecutive sequences and never overlap: the last block holds the highest sequence.
  latest: `SELECT documents FROM audit_blocks WHERE conversation_id = ?
    ORDER BY first_sequence DESC, first_id DESC LIMIT 1`,
};

/** About half a millisecond of inserts: a turn's block is a few kilobytes. */
const BLOCKS_PER_WRITE = 16;

/**
 * The audit ledger's entries in SQLite, kept in blocks: the consecutive entries of one conversation in one
 * `append` (a turn's entries, one per task) are one row holding their documents as a JSON array. A turn then costs
 * one row and two index entries instead of a row and three index entries per task, which is most of what the
 * ledger cost a turn. Insert-only: triggers refuse UPDATE and DELETE (see the migration).
 */
export class SqliteAuditStore extends SqliteStore<keyof typeof STATEMENTS> implements AuditStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  /**
   * Writes the blocks `BLOCKS_PER_WRITE` at a time, each slice a write of its own, so the group commit can spread a
   * large flush over several transactions with the event loop running between them. A failed append may have
   * written some slices; appending the same rows again skips those (a block's first id is unique).
   */
  async append(rows: readonly AuditRow[]): Promise<void> {
    const blocks = blocksOf(rows);
    const slices: Promise<void>[] = [];
    for (let start = 0; start < blocks.length; start += BLOCKS_PER_WRITE) {
      const slice = blocks.slice(start, start + BLOCKS_PER_WRITE);
      slices.push(this.write(() => this.#insert(slice)));
    }
    await Promise.all(slices);
  }

  #insert(blocks: readonly AuditRow[][]): void {
    for (const block of blocks) {
      const first = block[0]!;
      this.sql.insert.run(
        first.id,
        first.conversationId,
        first.sequence,
        block.length,
        first.agentId,
        first.agentVersion,
        first.timestamp,
        jsonArrayText(block),
      );
    }
  }

  async list(conversationId: string, skip: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
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
    if (start === undefined) return [];
    const documents: string[] = [];
    let toSkip = skip - before;
    for (const block of this.sql.from.iterate(
      conversationId,
      start.first_sequence as number,
      start.first_id as string,
    )) {
      for (const document of documentsOf(String(block.documents))) {
        if (toSkip > 0) {
          toSkip--;
          continue;
        }
        documents.push(document);
        if (documents.length === limit) return documents;
      }
    }
    return documents;
  }

  async count(conversationId: string): Promise<number> {
    return Number(this.sql.count.get(conversationId)?.n ?? 0);
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const row = this.sql.latest.get(conversationId);
    return row === undefined ? undefined : documentsOf(String(row.documents)).at(-1);
  }
}

/** Runs of consecutive rows of one conversation with consecutive sequences (a turn's entries, as the ledger writes them). */
function blocksOf(rows: readonly AuditRow[]): AuditRow[][] {
  const blocks: AuditRow[][] = [];
  let current: AuditRow[] = [];
  for (const row of rows) {
    const last = current.at(-1);
    if (last && (last.conversationId !== row.conversationId || last.sequence + 1 !== row.sequence)) {
      blocks.push(current);
      current = [];
    }
    current.push(row);
  }
  if (current.length > 0) blocks.push(current);
  return blocks;
}

/**
 * The block's documents as one JSON array text, built by a single `join`: bracketing a joined text would make a
 * rope that binding the statement copies again (a turn's documents are a few kilobytes, twice the bytes when they
 * hold a character beyond Latin-1).
 */
function jsonArrayText(block: readonly AuditRow[]): string {
  const parts = block.map((row) => row.document);
  parts[0] = `[${parts[0]}`;
  parts[parts.length - 1] = `${parts.at(-1)}]`;
  return parts.join(',');
}

/** The documents of a block; text that is no JSON array any more (changed behind the service) is one document. */
function documentsOf(block: string): string[] {
  try {
    const parsed: unknown = JSON.parse(block);
    if (Array.isArray(parsed)) return parsed.map((entry) => JSON.stringify(entry));
  } catch {
    // falls through: verification reports it as unreadable
  }
  return [block];
}
