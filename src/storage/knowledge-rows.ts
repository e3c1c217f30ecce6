import type { KnowledgeDocument } from './knowledge-ports.ts';

/** The columns of `rag_documents` both adapters read, and the document a row of them holds. */
export const DOCUMENT_COLUMNS =
  'id, name, content_type, size_bytes, content_hash, chunk_count, ingestion_id, created_on, updated_on';

export function documentOfRow(row: Record<string, unknown>): KnowledgeDocument {
  return {
    id: String(row.id),
    name: String(row.name),
    contentType: String(row.content_type),
    sizeBytes: Number(row.size_bytes),
    contentHash: String(row.content_hash),
    chunkCount: Number(row.chunk_count),
    ingestionId: String(row.ingestion_id),
    createdOn: Number(row.created_on),
    updatedOn: Number(row.updated_on),
  };
}
