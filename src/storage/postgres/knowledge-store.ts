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
import { inTransaction, type Queryable } from './transaction.ts';

const BUMP = `INSERT INTO rag_revisions (kb_id, revision) VALUES ($1, 1)
  ON CONFLICT (kb_id) DO UPDATE SET revision = rag_revisions.revision + 1 RETURNING revision`;
/** Chunks per INSERT statement (5 parameters each, well below PostgreSQL's 65535). */
const CHUNK_BATCH = 500;

/**
 * Knowledge-base documents and chunks in PostgreSQL; vectors are little-endian float32 `bytea`, searched in
 * process by every instance (`src/knowledge/vector-index.ts`).
 */
export class PostgresKnowledgeStore implements KnowledgeStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async vectorExtension(): Promise<VectorExtension> {
    const { rows } = await this.#db.query(
      "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'vector'",
    );
    const [row] = rows as Array<{ default_version: string | null; installed_version: string | null }>;
    if (!row) return { pgvector: 'absent' };
    return row.installed_version
      ? { pgvector: 'installed', version: row.installed_version }
      : { pgvector: 'available', ...(row.default_version ? { version: row.default_version } : {}) };
  }

  async replaceDocument(kbId: string, document: KnowledgeDocument, chunks: readonly NewChunk[]): Promise<void> {
    await inTransaction(this.#db, async (client) => {
      await client.query('DELETE FROM rag_chunks WHERE kb_id = $1 AND document_id = $2', [kbId, document.id]);
      const revision = Number((await client.query(BUMP, [kbId])).rows[0].revision);
      await client.query(
        `INSERT INTO rag_documents (kb_id, ${DOCUMENT_COLUMNS}, revision)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (kb_id, id) DO UPDATE SET name = $3, content_type = $4, size_bytes = $5, content_hash = $6,
           chunk_count = $7, ingestion_id = $8, updated_on = $10, revision = $11`,
        [
          kbId,
          document.id,
          document.name,
          document.contentType,
          document.sizeBytes,
          document.contentHash,
          document.chunkCount,
          document.ingestionId,
          document.createdOn,
          document.updatedOn,
          revision,
        ],
      );
      for (let start = 0; start < chunks.length; start += CHUNK_BATCH) {
        const batch = chunks.slice(start, start + CHUNK_BATCH);
        const values: unknown[] = [];
        const rows = batch.map((chunk, i) => {
          values.push(kbId, document.id, start + i, chunk.text, Buffer.from(vectorBytes(chunk.embedding)));
          const at = i * 5;
          return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5})`;
        });
        await client.query(
          `INSERT INTO rag_chunks (kb_id, document_id, chunk_index, text, embedding) VALUES ${rows.join(', ')}`,
          values,
        );
      }
    });
  }

  async deleteDocument(kbId: string, documentId: string): Promise<boolean> {
    return inTransaction(this.#db, async (client) => {
      await client.query('DELETE FROM rag_chunks WHERE kb_id = $1 AND document_id = $2', [kbId, documentId]);
      const { rowCount } = await client.query('DELETE FROM rag_documents WHERE kb_id = $1 AND id = $2', [
        kbId,
        documentId,
      ]);
      if ((rowCount ?? 0) > 0) await client.query(BUMP, [kbId]);
      return (rowCount ?? 0) > 0;
    });
  }

  async listDocuments(kbId: string): Promise<KnowledgeDocument[]> {
    const { rows } = await this.#db.query(
      `SELECT ${DOCUMENT_COLUMNS} FROM rag_documents WHERE kb_id = $1 ORDER BY name`,
      [kbId],
    );
    return rows.map(documentOfRow);
  }

  async readDocument(kbId: string, documentId: string): Promise<KnowledgeDocument | undefined> {
    const { rows } = await this.#db.query(
      `SELECT ${DOCUMENT_COLUMNS} FROM rag_documents WHERE kb_id = $1 AND id = $2`,
      [kbId, documentId],
    );
    return rows[0] === undefined ? undefined : documentOfRow(rows[0]);
  }

  async revision(kbId: string): Promise<number> {
    const { rows } = await this.#db.query('SELECT revision FROM rag_revisions WHERE kb_id = $1', [kbId]);
    return Number(rows[0]?.revision ?? 0);
  }

  async documentRevisions(kbId: string): Promise<{ revision: number; documents: Map<string, number> }> {
    return inTransaction(this.#db, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const revision = await client.query('SELECT revision FROM rag_revisions WHERE kb_id = $1', [kbId]);
      const { rows } = await client.query('SELECT id, revision FROM rag_documents WHERE kb_id = $1', [kbId]);
      return {
        revision: Number(revision.rows[0]?.revision ?? 0),
        documents: new Map(rows.map((row) => [String(row.id), Number(row.revision)])),
      };
    });
  }

  async loadChunks(kbId: string, documentIds?: readonly string[]): Promise<StoredChunk[]> {
    const { rows } = await this.#db.query(
      `SELECT c.document_id, d.name, c.chunk_index, c.text, c.embedding FROM rag_chunks c
       JOIN rag_documents d ON d.kb_id = c.kb_id AND d.id = c.document_id
       WHERE c.kb_id = $1 AND ($2::text[] IS NULL OR c.document_id = ANY($2))`,
      [kbId, documentIds === undefined ? null : [...documentIds]],
    );
    return rows.map((row) => ({
      documentId: String(row.document_id),
      documentName: String(row.name),
      chunkIndex: Number(row.chunk_index),
      text: String(row.text),
      embedding: vectorOf(row.embedding as Buffer),
    }));
  }

  async purge(kbId: string): Promise<void> {
    await inTransaction(this.#db, async (client) => {
      for (const table of ['rag_chunks', 'rag_documents', 'rag_ingestions'])
        await client.query(`DELETE FROM ${table} WHERE kb_id = $1`, [kbId]);
      await client.query(BUMP, [kbId]);
    });
  }

  async saveIngestion(record: IngestionRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO rag_ingestions (id, kb_id, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET body = $3`,
      [record.id, record.kbId, JSON.stringify(record)],
    );
  }

  async readIngestion(kbId: string, ingestionId: string): Promise<IngestionRecord | undefined> {
    const { rows } = await this.#db.query('SELECT body FROM rag_ingestions WHERE kb_id = $1 AND id = $2', [
      kbId,
      ingestionId,
    ]);
    return rows[0] === undefined ? undefined : (JSON.parse(String(rows[0].body)) as IngestionRecord);
  }
}
