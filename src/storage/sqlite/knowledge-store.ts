import type { DatabaseSync } from 'node:sqlite';
import {
  vectorBytes,
  vectorOf,
  type IngestionRecord,
  type KnowledgeDocument,
  type KnowledgeStore,
  type NewChunk,
  type StoredChunk,
  type VectorExtension,
} from '../knowledge-ports.ts';
import { DOCUMENT_COLUMNS, documentOfRow } from '../knowledge-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';
import { readTransaction } from './transaction.ts';

const STATEMENTS = {
  bump: `INSERT INTO rag_revisions (kb_id, revision) VALUES (:kbId, 1)
    ON CONFLICT (kb_id) DO UPDATE SET revision = revision + 1 RETURNING revision`,
  revision: 'SELECT revision FROM rag_revisions WHERE kb_id = ?',
  deleteChunks: 'DELETE FROM rag_chunks WHERE kb_id = ? AND document_id = ?',
  insertChunk: `INSERT INTO rag_chunks (kb_id, document_id, chunk_index, text, embedding)
    VALUES (?, ?, ?, ?, ?)`,
  upsertDocument: `INSERT INTO rag_documents (kb_id, ${DOCUMENT_COLUMNS}, revision)
    VALUES (:kbId, :id, :name, :contentType, :sizeBytes, :contentHash, :chunkCount, :ingestionId, :createdOn, :updatedOn,
      :revision)
    ON CONFLICT (kb_id, id) DO UPDATE SET name = :name, content_type = :contentType, size_bytes = :sizeBytes,
      content_hash = :contentHash, chunk_count = :chunkCount, ingestion_id = :ingestionId, updated_on = :updatedOn,
      revision = :revision`,
  deleteDocument: 'DELETE FROM rag_documents WHERE kb_id = ? AND id = ?',
  listDocuments: `SELECT ${DOCUMENT_COLUMNS} FROM rag_documents WHERE kb_id = ? ORDER BY name`,
  readDocument: `SELECT ${DOCUMENT_COLUMNS} FROM rag_documents WHERE kb_id = ? AND id = ?`,
  chunks: `SELECT c.document_id, d.name, c.chunk_index, c.text, c.embedding FROM rag_chunks c
    JOIN rag_documents d ON d.kb_id = c.kb_id AND d.id = c.document_id WHERE c.kb_id = ?`,
  chunksOf: `SELECT c.document_id, d.name, c.chunk_index, c.text, c.embedding FROM rag_chunks c
    JOIN rag_documents d ON d.kb_id = c.kb_id AND d.id = c.document_id
    WHERE c.kb_id = ? AND c.document_id IN (SELECT value FROM json_each(?))`,
  documentRevisions: 'SELECT id, revision FROM rag_documents WHERE kb_id = ?',
  purgeChunks: 'DELETE FROM rag_chunks WHERE kb_id = ?',
  purgeDocuments: 'DELETE FROM rag_documents WHERE kb_id = ?',
  purgeIngestions: 'DELETE FROM rag_ingestions WHERE kb_id = ?',
  saveIngestion: `INSERT INTO rag_ingestions (id, kb_id, body) VALUES (:id, :kbId, :body)
    ON CONFLICT (id) DO UPDATE SET body = :body`,
  readIngestion: 'SELECT body FROM rag_ingestions WHERE kb_id = ? AND id = ?',
};

/** Knowledge-base documents and chunks in the embedded store; vectors are little-endian float32 BLOBs. */
export class SqliteKnowledgeStore extends SqliteStore<keyof typeof STATEMENTS> implements KnowledgeStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async vectorExtension(): Promise<VectorExtension> {
    return { pgvector: 'none' };
  }

  async replaceDocument(kbId: string, document: KnowledgeDocument, chunks: readonly NewChunk[]): Promise<void> {
    await this.write(() => {
      this.sql.deleteChunks.run(kbId, document.id);
      const existing = this.sql.readDocument.get(kbId, document.id);
      const revision = Number(this.sql.bump.get({ kbId })!.revision);
      this.sql.upsertDocument.run({
        kbId,
        ...document,
        createdOn: existing === undefined ? document.createdOn : Number(existing.created_on),
        revision,
      });
      for (const [index, chunk] of chunks.entries())
        this.sql.insertChunk.run(kbId, document.id, index, chunk.text, vectorBytes(chunk.embedding));
    });
  }

  async deleteDocument(kbId: string, documentId: string): Promise<boolean> {
    return this.write(() => {
      this.sql.deleteChunks.run(kbId, documentId);
      const { changes } = this.sql.deleteDocument.run(kbId, documentId);
      if (changes > 0) this.sql.bump.run({ kbId });
      return changes > 0;
    });
  }

  async listDocuments(kbId: string): Promise<KnowledgeDocument[]> {
    return this.sql.listDocuments.all(kbId).map(documentOfRow);
  }

  async readDocument(kbId: string, documentId: string): Promise<KnowledgeDocument | undefined> {
    const row = this.sql.readDocument.get(kbId, documentId);
    return row === undefined ? undefined : documentOfRow(row);
  }

  async revision(kbId: string): Promise<number> {
    return Number(this.sql.revision.get(kbId)?.revision ?? 0);
  }

  async documentRevisions(kbId: string): Promise<{ revision: number; documents: Map<string, number> }> {
    return readTransaction(this.db, () => ({
      revision: Number(this.sql.revision.get(kbId)?.revision ?? 0),
      documents: new Map(this.sql.documentRevisions.all(kbId).map((row) => [String(row.id), Number(row.revision)])),
    }));
  }

  async loadChunks(kbId: string, documentIds?: readonly string[]): Promise<StoredChunk[]> {
    const rows =
      documentIds === undefined ? this.sql.chunks.all(kbId) : this.sql.chunksOf.all(kbId, JSON.stringify(documentIds));
    return rows.map((row) => ({
      documentId: String(row.document_id),
      documentName: String(row.name),
      chunkIndex: Number(row.chunk_index),
      text: String(row.text),
      embedding: vectorOf(row.embedding as Uint8Array),
    }));
  }

  async purge(kbId: string): Promise<void> {
    await this.write(() => {
      this.sql.purgeChunks.run(kbId);
      this.sql.purgeDocuments.run(kbId);
      this.sql.purgeIngestions.run(kbId);
      this.sql.bump.run({ kbId });
    });
  }

  async saveIngestion(record: IngestionRecord): Promise<void> {
    await this.write(() =>
      this.sql.saveIngestion.run({ id: record.id, kbId: record.kbId, body: JSON.stringify(record) }),
    );
  }

  async readIngestion(kbId: string, ingestionId: string): Promise<IngestionRecord | undefined> {
    const row = this.sql.readIngestion.get(kbId, ingestionId);
    return row === undefined ? undefined : (JSON.parse(String(row.body)) as IngestionRecord);
  }
}
