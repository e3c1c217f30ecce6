/**
 * Storage port of the audit ledger (`src/ops/audit.ts`). Write-once: entries are only ever inserted; there is no
 * update or delete in this interface, and the schema of both adapters refuses UPDATE and DELETE on the table
 * (tampering needs deliberate DDL). The store keeps each entry as the JSON text it was given, so verification
 * recomputes its HMAC from exactly what was signed.
 */

export interface AuditRow {
  readonly id: string;
  readonly conversationId: string;
  /** Per conversation, strictly increasing from 1. */
  readonly sequence: number;
  readonly agentId: string;
  readonly agentVersion: number;
  /** ISO-8601, milliseconds. */
  readonly timestamp: string;
  /** The whole entry as JSON text (what was signed, plus the signature). */
  readonly document: string;
}

export interface AuditStore {
  /**
   * Inserts the rows in one transaction (all or none). A retried batch whose first attempt did commit writes
   * nothing twice: PostgreSQL skips each row whose id is stored, the embedded store each block (a conversation's
   * consecutive rows) whose first id is stored.
   */
  append(rows: readonly AuditRow[]): Promise<void>;
  /** Entry documents of a conversation by sequence (ties by id); an unknown conversation has none. */
  list(conversationId: string, skip: number, limit: number): Promise<string[]>;
  count(conversationId: string): Promise<number>;
  /** The document of the conversation's entry with the highest sequence (the chain continues from it). */
  latest(conversationId: string): Promise<string | undefined>;
}
