/**
 * Storage port of the audit ledger (`src/ops/audit.ts`). Write-once: blocks are only ever inserted; there is no
 * update or delete in this interface, and the schema of both adapters refuses UPDATE and DELETE on the table
 * (tampering needs deliberate DDL). A block is the consecutive entries of one conversation written together (a
 * turn's, one per task) as one JSON document (`src/ops/audit-block.ts`); the store keeps it as the text it was given.
 */

export interface AuditBlock {
  /** The id of the block's first entry (unique). */
  readonly firstId: string;
  readonly conversationId: string;
  /** The sequence of the block's first entry; the others follow without a gap. */
  readonly firstSequence: number;
  readonly entryCount: number;
  readonly agentId: string;
  readonly agentVersion: number;
  /** When the first entry was made: ISO-8601, milliseconds. */
  readonly timestamp: string;
  readonly document: string;
}

/** The block documents holding a range of a conversation's entries. */
export interface AuditBlockRange {
  readonly documents: string[];
  /** Entries of the first block before the range. */
  readonly skipInFirst: number;
}

export interface AuditStore {
  /**
   * Inserts the blocks (all or none, or, on the embedded store, in slices each of which is all or none). A retried
   * append whose first attempt did write stores nothing twice: a block whose first id is stored is skipped.
   */
  append(blocks: readonly AuditBlock[]): Promise<void>;
  /**
   * The blocks holding the conversation's entries number `skip` (from 0, in sequence order, ties by first id) to
   * `skip + limit - 1`, or as many of them as there are; an unknown conversation has none.
   */
  blocks(conversationId: string, skip: number, limit: number): Promise<AuditBlockRange>;
  count(conversationId: string): Promise<number>;
  /** The document of the conversation's block with the highest sequence (the chain continues from its last entry). */
  latest(conversationId: string): Promise<string | undefined>;
}
