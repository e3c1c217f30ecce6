import type { AuditBlock } from './audit-ports.ts';

/** The columns of a stored audit block (`audit_blocks`, both stores), in the order `auditBlockValues` gives. */
export const AUDIT_BLOCK_COLUMNS = [
  'first_id',
  'conversation_id',
  'first_sequence',
  'entry_count',
  'agent_id',
  'agent_version',
  'created_at',
  'documents',
] as const;

/** A block's values in the order of `AUDIT_BLOCK_COLUMNS`. */
export function auditBlockValues(block: AuditBlock): [string, string, number, number, string, number, string, string] {
  return [
    block.firstId,
    block.conversationId,
    block.firstSequence,
    block.entryCount,
    block.agentId,
    block.agentVersion,
    block.timestamp,
    block.document,
  ];
}
