/**
 * Documents and chunks of knowledge bases (`src/knowledge/`), keyed by the knowledge base's id. Every change to a
 * knowledge base's documents raises its revision in the same transaction, so an instance holding an index of
 * its chunks knows, with one small read, whether the index is still current (also when another instance wrote).
 */

export interface KnowledgeDocument {
  /** Derived from the name (`documentIdOf`): the same name is the same document. */
  readonly id: string;
  readonly name: string;
  readonly contentType: string;
  readonly sizeBytes: number;
  /** SHA-256 of the extracted text. */
  readonly contentHash: string;
  readonly chunkCount: number;
  readonly ingestionId: string;
  readonly createdOn: number;
  readonly updatedOn: number;
}

export interface NewChunk {
  readonly text: string;
  readonly embedding: Float32Array;
}

export interface StoredChunk extends NewChunk {
  readonly documentId: string;
  readonly documentName: string;
  readonly chunkIndex: number;
}

/** An ingestion's progress: the batch and each of its documents (stored as JSON, read by any instance). */
export interface IngestionRecord {
  readonly id: string;
  readonly kbId: string;
  /** `completed`: every document is in; `completed_with_errors`: some failed; `failed`: all failed. */
  readonly status: 'pending' | 'processing' | 'completed' | 'completed_with_errors' | 'failed';
  readonly createdOn: number;
  readonly updatedOn: number;
  readonly documents: readonly IngestionDocument[];
}

export interface IngestionDocument {
  readonly name: string;
  readonly status: 'pending' | 'processing' | 'completed' | 'failed';
  readonly chunks?: number;
  readonly error?: string;
}

/**
 * Whether the store could search vectors itself: PostgreSQL's `pgvector` extension (`vector` in
 * `pg_available_extensions`): `absent` from the server, `available` to `CREATE EXTENSION`, or `installed` in this
 * database; `none` for the embedded store, which has no such extension.
 */
export interface VectorExtension {
  readonly pgvector: 'none' | 'absent' | 'available' | 'installed';
  /** The installed version, else the version the server would install. */
  readonly version?: string;
}

export interface KnowledgeStore {
  /** What the store offers for vector search (asked once at start). */
  vectorExtension(): Promise<VectorExtension>;
  /** Replaces the document's chunks (all of them, or none on failure), raises the revision and records it on the document. */
  replaceDocument(kbId: string, document: KnowledgeDocument, chunks: readonly NewChunk[]): Promise<void>;
  /** Removes the document and its chunks; false when it does not exist. */
  deleteDocument(kbId: string, documentId: string): Promise<boolean>;
  /** The documents, by name. */
  listDocuments(kbId: string): Promise<KnowledgeDocument[]>;
  readDocument(kbId: string, documentId: string): Promise<KnowledgeDocument | undefined>;
  /** 0 for a knowledge base that never had a document. */
  revision(kbId: string): Promise<number>;
  /**
   * The knowledge base's revision and, per document id, the revision that last wrote the document (one snapshot):
   * what an index compares with its own to reload only the documents that changed.
   */
  documentRevisions(kbId: string): Promise<{ revision: number; documents: Map<string, number> }>;
  /** The chunks of the given documents (every document when `documentIds` is undefined). */
  loadChunks(kbId: string, documentIds?: readonly string[]): Promise<StoredChunk[]>;
  /** Removes every document, chunk and ingestion of a knowledge base. */
  purge(kbId: string): Promise<void>;
  saveIngestion(record: IngestionRecord): Promise<void>;
  readIngestion(kbId: string, ingestionId: string): Promise<IngestionRecord | undefined>;
}

/** Float32 vectors as little-endian bytes (the stored form, both stores). */
export function vectorBytes(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function vectorOf(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
