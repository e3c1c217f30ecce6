import { createHash, randomUUID } from 'node:crypto';
import { embedMany } from 'ai';
import { AppError, invalid, notFound } from '../errors.ts';
import type { ResourceService } from '../resources/service.ts';
import { RAG_DEFAULTS, type RagConfiguration } from '../resources/schemas/rag.ts';
import type { CallerAccess } from '../security/access.ts';
import { redact, type SecretResolver } from '../security/secret-references.ts';
import type {
  IngestionDocument,
  IngestionRecord,
  KnowledgeDocument,
  KnowledgeStore,
  VectorExtension,
} from '../storage/knowledge-ports.ts';
import { chunkText } from './chunking.ts';
import { documentText, type DocumentFormat } from './documents.ts';
import {
  embeddingCall,
  embeddingModelName,
  type EmbeddingModels,
  type EmbeddingPurpose,
} from './embedding-providers.ts';
import { VectorIndex, type SearchHit } from './vector-index.ts';

/**
 * Knowledge bases at run time: ingestion (asynchronous, one document after the other, each failing alone),
 * documents, and search. Documents and chunks are in the store, keyed by the knowledge base's id, so every
 * instance sees the same knowledge base; each instance searches an in-process index it rebuilds when the
 * store's revision of the knowledge base moved (one small read per search).
 */

export interface IncomingDocument {
  readonly name: string;
  readonly contentType: string;
  readonly format: DocumentFormat;
  readonly bytes: Uint8Array;
}

/** A knowledge base as retrieval needs it: its id and one version's configuration. */
export interface KnowledgeBase {
  readonly id: string;
  readonly config: RagConfiguration;
}

export interface RetrievalOptions {
  readonly maxResults?: number | undefined;
  readonly minScore?: number | undefined;
}

export interface KnowledgeServiceOptions {
  readonly store: KnowledgeStore;
  readonly resources: ResourceService;
  readonly models: EmbeddingModels;
  readonly secrets: SecretResolver;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** Ingestions processed at once by this instance (the rest wait in arrival order). */
  readonly concurrentIngestions?: number;
  /**
   * How often a running ingestion records its progress even when no document finished; one whose record stayed
   * unchanged four times as long is taken as abandoned (its instance died) and reported failed.
   */
  readonly heartbeatMillis?: number;
  /**
   * Knowledge bases with at least this many chunks are searched through an approximate (HNSW) index once it is
   * built; undefined: always exactly.
   */
  readonly approximateMinChunks?: number | undefined;
  readonly clock?: () => number;
}

/** How this instance searches vectors, found at start (`GET /ragstore/vectorsearch`, and the start-up log). */
export interface VectorSearchInfo {
  /** Where the vectors are searched: in this process (the store keeps them as bytes). */
  readonly search: 'in-process';
  /** PostgreSQL's pgvector extension as the store reported it (`none`: the embedded store). */
  readonly pgvector: VectorExtension['pgvector'] | 'unknown';
  readonly pgvectorVersion?: string;
  readonly reason: string;
  /** Knowledge bases from this many chunks are searched through an HNSW index (absent: always exactly). */
  readonly approximateMinChunks?: number;
}

/** How an instance searches one knowledge base (`GET /ragstore/rags/<id>/index`). */
export interface SearchIndexState {
  readonly chunks: number;
  readonly dimensions: readonly number[];
  /** `approximate`: through the HNSW index (plus exact scoring of what changed since it was built). */
  readonly search: 'exact' | 'approximate';
  /** An approximate index is being built (searches stay exact meanwhile, or use the previous one). */
  readonly building: boolean;
  /** Chunks written or replaced since the approximate index was built (all of them when there is none). */
  readonly approximateLag: number;
  readonly approximateMinChunks: number | undefined;
}

/** The id of a document: derived from its name, so that ingesting the same name again replaces it. */
export function documentIdOf(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 24);
}

const DEFAULT_CONCURRENT_INGESTIONS = 2;
const PARALLEL_EMBEDDING_CALLS = 4;
const DEFAULT_HEARTBEAT_MILLIS = 30_000;
const ABANDONED_AFTER_HEARTBEATS = 4;
/** Knowledge bases whose search index an instance keeps in memory (least recently searched out first). */
const CACHED_INDEXES = 16;
/** The approximate index is rebuilt when this share of the chunks changed since it was built. */
const APPROXIMATE_REBUILD_SHARE = 0.1;

export class KnowledgeService {
  readonly #options: KnowledgeServiceOptions;
  readonly #clock: () => number;
  readonly #indexes = new Map<string, Promise<VectorIndex>>();
  /** Approximate indexes being built, per knowledge base. */
  readonly #building = new Map<string, Promise<void>>();
  #vectorSearch: VectorSearchInfo | undefined;
  readonly #stopping = new AbortController();
  readonly #running = new Set<Promise<void>>();
  readonly #waiting: Array<() => void> = [];
  #active = 0;

  constructor(options: KnowledgeServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    // A knowledge base deleted for good takes its documents, chunks and ingestions with it.
    options.resources.onPurged(async (kind, id) => {
      if (kind !== 'rag') return;
      await options.store.purge(id);
      this.#indexes.delete(id);
    });
  }

  /**
   * Asks the store what it offers for vector search and settles how this instance searches (once, at start). No
   * path uses pgvector yet: where the server has it, the answer says so and vectors are still searched in process.
   */
  async detectVectorSearch(): Promise<VectorSearchInfo> {
    const approximate =
      this.#options.approximateMinChunks === undefined
        ? 'exactly'
        : `exactly, and through an HNSW index (usearch) from ${this.#options.approximateMinChunks} chunks on`;
    const extension = await this.#options.store.vectorExtension().catch((error: unknown) => error as Error);
    const reasonOf = (): string => {
      if (extension instanceof Error)
        return `PostgreSQL's extensions could not be listed (${extension.message}): vectors are searched in process, ${approximate}.`;
      switch (extension.pgvector) {
        case 'none':
          return `The embedded store has no vector extension: vectors are searched in process, ${approximate}.`;
        case 'absent':
          return `PostgreSQL offers no 'vector' extension (pg_available_extensions has none): vectors are kept in rag_chunks and searched in process, ${approximate}.`;
        default:
          return `PostgreSQL has the 'vector' extension (${extension.pgvector}${extension.version ? `, ${extension.version}` : ''}), which this service does not use yet: vectors are kept in rag_chunks and searched in process, ${approximate}.`;
      }
    };
    this.#vectorSearch = {
      search: 'in-process',
      pgvector: extension instanceof Error ? 'unknown' : extension.pgvector,
      ...(extension instanceof Error || extension.version === undefined ? {} : { pgvectorVersion: extension.version }),
      reason: reasonOf(),
      ...(this.#options.approximateMinChunks === undefined
        ? {}
        : { approximateMinChunks: this.#options.approximateMinChunks }),
    };
    return this.#vectorSearch;
  }

  /** What `detectVectorSearch` found (detecting it now if it was not asked at start). */
  async vectorSearch(): Promise<VectorSearchInfo> {
    return this.#vectorSearch ?? this.detectVectorSearch();
  }

  /** The configuration of a version (the current one when `version` is undefined), after the caller's access check. */
  async knowledgeBase(id: string, version: number | undefined, caller?: CallerAccess): Promise<KnowledgeBase> {
    const { resources } = this.#options;
    const wanted = version ?? (await resources.currentVersion('rag', id, caller));
    return { id, config: JSON.parse(await resources.read('rag', id, wanted, caller)) as RagConfiguration };
  }

  /** As `knowledgeBase`, for a caller who changes its documents (needs EDIT). */
  async knowledgeBaseToChange(id: string, version: number | undefined, caller?: CallerAccess): Promise<KnowledgeBase> {
    await this.#options.resources.authorize(id, caller, 'EDIT', 'knowledge base');
    return this.knowledgeBase(id, version, caller);
  }

  /** Records a pending ingestion of the documents and processes it in the background; answers the record. */
  async startIngestion(knowledgeBase: KnowledgeBase, documents: readonly IncomingDocument[]): Promise<IngestionRecord> {
    if (documents.length === 0) throw invalid('The request holds no document to ingest.');
    const names = new Set<string>();
    for (const document of documents) {
      if (names.has(document.name))
        throw invalid(`The document name '${document.name}' is given twice; each document needs its own name.`);
      names.add(document.name);
    }
    const now = this.#clock();
    const record: IngestionRecord = {
      id: randomUUID(),
      kbId: knowledgeBase.id,
      status: 'pending',
      createdOn: now,
      updatedOn: now,
      documents: documents.map((document) => ({ name: document.name, status: 'pending' })),
    };
    await this.#options.store.saveIngestion(record);
    // Waiting behind other ingestions counts as alive too: the heartbeat starts now.
    const progress = new IngestionProgress(record, this.#options.store, this.#clock, this.#heartbeatMillis);
    const job = this.#whenFree(() => this.#ingest(knowledgeBase, progress, documents)).finally(() => {
      progress.stop();
      this.#running.delete(job);
    });
    this.#running.add(job);
    return record;
  }

  async ingestion(kbId: string, ingestionId: string, caller?: CallerAccess): Promise<IngestionRecord> {
    await this.#options.resources.authorize(kbId, caller, 'USE', 'knowledge base');
    const record = await this.#options.store.readIngestion(kbId, ingestionId);
    if (!record) throw notFound(`No ingestion ${ingestionId} of the knowledge base ${kbId}.`);
    const silentFor = this.#clock() - record.updatedOn;
    if (record.status !== 'pending' && record.status !== 'processing') return record;
    if (silentFor <= this.#heartbeatMillis * ABANDONED_AFTER_HEARTBEATS) return record;
    // Its instance stopped without finishing (a crash): what it did not finish failed, and it says so.
    const documents = record.documents.map((document) =>
      document.status === 'completed' || document.status === 'failed'
        ? document
        : {
            name: document.name,
            status: 'failed' as const,
            error: 'The instance ingesting it stopped before it finished.',
          },
    );
    const done = documents.filter((document) => document.status === 'completed').length;
    const abandoned: IngestionRecord = {
      ...record,
      status: done === 0 ? 'failed' : 'completed_with_errors',
      updatedOn: this.#clock(),
      documents,
    };
    await this.#options.store.saveIngestion(abandoned);
    return abandoned;
  }

  get #heartbeatMillis(): number {
    return this.#options.heartbeatMillis ?? DEFAULT_HEARTBEAT_MILLIS;
  }

  async documents(kbId: string, caller?: CallerAccess): Promise<KnowledgeDocument[]> {
    await this.knowledgeBase(kbId, undefined, caller);
    return this.#options.store.listDocuments(kbId);
  }

  async deleteDocument(kbId: string, documentId: string, caller?: CallerAccess): Promise<void> {
    await this.knowledgeBaseToChange(kbId, undefined, caller);
    if (!(await this.#options.store.deleteDocument(kbId, documentId)))
      throw notFound(`No document ${documentId} in the knowledge base ${kbId}.`);
  }

  /** The chunks most relevant to `query`, best first, with their sources and scores. */
  async search(
    knowledgeBase: KnowledgeBase,
    query: string,
    options: RetrievalOptions = {},
    signal?: AbortSignal,
  ): Promise<SearchHit[]> {
    const { config } = knowledgeBase;
    const index = await this.#index(knowledgeBase.id);
    if (index.size === 0 || query.trim() === '') return [];
    const [vector] = await this.#embed(config, 'query', [query], signal).catch((error: unknown) => {
      if (signal?.aborted) throw error;
      // The provider failed, not the request: 503 with the reason (never a secret), not an internal error.
      throw new AppError('unavailable', (error as Error).message);
    });
    if (!index.dimensions.includes(vector!.length))
      throw new AppError(
        'conflict',
        `The knowledge base's chunks have ${index.dimensions.join(' and ')} dimensions, but its embedding model now answers ${vector!.length}: ingest the documents again.`,
      );
    return index.search(vector!, {
      maxResults: options.maxResults ?? config.maxResults ?? RAG_DEFAULTS.maxResults,
      minScore: options.minScore ?? config.minScore ?? RAG_DEFAULTS.minScore,
      keywords: config.hybridSearch
        ? { text: query, weight: config.keywordWeight ?? RAG_DEFAULTS.keywordWeight }
        : undefined,
    });
  }

  /** Stops taking work: running ingestions end, their unfinished documents marked failed. */
  async close(): Promise<void> {
    this.#stopping.abort(new Error('the service stopped'));
    for (const release of this.#waiting.splice(0)) release();
    await Promise.allSettled([...this.#running, ...this.#building.values()]);
  }

  async #whenFree(work: () => Promise<void>): Promise<void> {
    const limit = this.#options.concurrentIngestions ?? DEFAULT_CONCURRENT_INGESTIONS;
    if (this.#active >= limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#active++;
    try {
      await work();
    } finally {
      this.#active--;
      this.#waiting.shift()?.();
    }
  }

  async #ingest(
    knowledgeBase: KnowledgeBase,
    progress: IngestionProgress,
    documents: readonly IncomingDocument[],
  ): Promise<void> {
    const { id } = progress;
    try {
      await progress.save('processing');
      for (const [i, document] of documents.entries()) {
        if (this.#stopping.signal.aborted) {
          progress.documents[i] = {
            name: document.name,
            status: 'failed',
            error: 'The ingestion was interrupted: the service stopped.',
          };
          continue;
        }
        progress.documents[i] = { name: document.name, status: 'processing' };
        await progress.save('processing');
        progress.documents[i] = await this.#ingestDocument(knowledgeBase, id, document);
      }
      const failed = progress.documents.filter((state) => state.status === 'failed').length;
      progress.stop();
      await progress.save(
        failed === 0 ? 'completed' : failed === documents.length ? 'failed' : 'completed_with_errors',
      );
    } catch (error) {
      this.#options.log.warn(
        { knowledgeBase: knowledgeBase.id, ingestion: id, problem: (error as Error).message },
        'a knowledge-base ingestion could not record its progress',
      );
    }
  }

  async #ingestDocument(
    knowledgeBase: KnowledgeBase,
    ingestionId: string,
    document: IncomingDocument,
  ): Promise<IngestionDocument> {
    const { config } = knowledgeBase;
    try {
      const text = await documentText(document.bytes, document.format);
      const chunks = chunkText(text, {
        strategy: config.chunkStrategy ?? RAG_DEFAULTS.chunkStrategy,
        size: config.chunkSize ?? RAG_DEFAULTS.chunkSize,
        overlap: config.chunkOverlap ?? RAG_DEFAULTS.chunkOverlap,
      });
      const vectors = await this.#embed(config, 'document', chunks, this.#stopping.signal);
      const now = this.#clock();
      await this.#options.store.replaceDocument(
        knowledgeBase.id,
        {
          id: documentIdOf(document.name),
          name: document.name,
          contentType: document.contentType,
          sizeBytes: document.bytes.byteLength,
          contentHash: createHash('sha256').update(text).digest('hex'),
          chunkCount: chunks.length,
          ingestionId,
          createdOn: now,
          updatedOn: now,
        },
        chunks.map((chunk, i) => ({ text: chunk, embedding: vectors[i]! })),
      );
      return { name: document.name, status: 'completed', chunks: chunks.length };
    } catch (error) {
      return { name: document.name, status: 'failed', error: (error as Error).message };
    }
  }

  /** Embeds texts with the knowledge base's model; errors name the provider and model, never a secret. */
  async #embed(
    config: RagConfiguration,
    purpose: EmbeddingPurpose,
    values: readonly string[],
    signal?: AbortSignal,
  ): Promise<Float32Array[]> {
    const provider = config.embeddingProvider ?? RAG_DEFAULTS.embeddingProvider;
    const parameters: Record<string, string> = {};
    const secretValues: string[] = [];
    for (const [name, value] of Object.entries(config.embeddingParameters ?? {})) {
      const resolved = await this.#options.secrets.resolve(value).catch((error: unknown) => {
        throw new Error(
          `The embedding parameter '${name}' refers to a secret that cannot be read: ${(error as Error).message}`,
        );
      });
      parameters[name] = resolved.text;
      secretValues.push(...resolved.secretValues);
    }
    const modelName = embeddingModelName(provider, parameters);
    const dimensions = parameters.dimensions === undefined ? undefined : Number(parameters.dimensions);
    try {
      const { embeddings } = await embedMany({
        model: await this.#options.models.model(provider, parameters),
        values: [...values],
        ...embeddingCall(provider, modelName, purpose, dimensions),
        // Providers that take one text a call (Bedrock's Titan) get a few calls at once, not one per chunk.
        maxParallelCalls: PARALLEL_EMBEDDING_CALLS,
        maxRetries: 2,
        abortSignal: signal,
      });
      return embeddings.map((embedding) => Float32Array.from(embedding));
    } catch (error) {
      const message = (error as Error).message;
      throw new Error(
        redact(`The ${provider} embedding model '${modelName}' failed: ${message}`.slice(0, 500), secretValues),
      );
    }
  }

  async #index(kbId: string): Promise<VectorIndex> {
    const { store } = this.#options;
    const revision = await store.revision(kbId);
    const cached = this.#indexes.get(kbId);
    const previous = cached && (await cached.catch(() => undefined));
    if (cached && previous?.revision === revision) {
      this.#indexes.delete(kbId);
      this.#indexes.set(kbId, cached);
      return previous;
    }
    if (cached && this.#indexes.get(kbId) !== cached) return this.#index(kbId);
    const loading = this.#load(kbId, previous).then((index) => {
      this.#maintainApproximate(kbId, index);
      return index;
    });
    this.#indexes.delete(kbId);
    this.#indexes.set(kbId, loading);
    loading.catch(() => this.#indexes.get(kbId) === loading && this.#indexes.delete(kbId));
    while (this.#indexes.size > CACHED_INDEXES) this.#indexes.delete(this.#indexes.keys().next().value!);
    return loading;
  }

  /**
   * Starts building an approximate index when the knowledge base is large enough and has none, or too much changed
   * since its was built; once built, the newest index of the knowledge base searches through it.
   */
  #maintainApproximate(kbId: string, index: VectorIndex): void {
    const min = this.#options.approximateMinChunks;
    if (min === undefined || index.size < min || this.#building.has(kbId)) return;
    if (index.approximate && index.approximateLag <= index.size * APPROXIMATE_REBUILD_SHARE) return;
    const build = index
      .buildApproximate(this.#stopping.signal)
      .then(async (layer) => {
        const newest = await this.#indexes.get(kbId)?.catch(() => undefined);
        newest?.useApproximate(layer);
        return newest;
      })
      .catch((error: unknown) => {
        if (!this.#stopping.signal.aborted)
          this.#options.log.warn(
            { knowledgeBase: kbId, problem: (error as Error).message },
            'the approximate search index of a knowledge base could not be built; its searches stay exact',
          );
        return undefined;
      })
      .then((newest) => {
        this.#building.delete(kbId);
        // What changed while it was built may already call for the next one.
        if (newest && !this.#stopping.signal.aborted) this.#maintainApproximate(kbId, newest);
      });
    this.#building.set(kbId, build);
  }

  /** How this instance searches the knowledge base (its index brought up to date first). */
  async searchIndexState(kbId: string, caller?: CallerAccess): Promise<SearchIndexState> {
    await this.knowledgeBase(kbId, undefined, caller);
    const index = await this.#index(kbId);
    return {
      chunks: index.size,
      dimensions: index.dimensions,
      search: index.approximate ? 'approximate' : 'exact',
      building: this.#building.has(kbId),
      approximateLag: index.approximateLag,
      approximateMinChunks: this.#options.approximateMinChunks,
    };
  }

  /** The index at the store's revision: built from every chunk, or from `previous` reloading only what changed. */
  async #load(kbId: string, previous: VectorIndex | undefined): Promise<VectorIndex> {
    const { store } = this.#options;
    const { revision, documents } = await store.documentRevisions(kbId);
    if (!previous) return VectorIndex.of(revision, await store.loadChunks(kbId), documents);
    const stale = previous.stale(documents);
    return previous.updated(revision, documents, stale.length === 0 ? [] : await store.loadChunks(kbId, stale));
  }
}

/**
 * The stored record of a running ingestion: writes one after the other (so a late heartbeat never overwrites the
 * final status), and a heartbeat that rewrites it while nothing else does, so other instances can tell a live
 * ingestion from one whose instance died.
 */
class IngestionProgress {
  readonly id: string;
  readonly documents: IngestionDocument[];
  #record: IngestionRecord;
  #writes: Promise<void> = Promise.resolve();
  readonly #store: KnowledgeStore;
  readonly #clock: () => number;
  readonly #heartbeat: NodeJS.Timeout;

  constructor(record: IngestionRecord, store: KnowledgeStore, clock: () => number, heartbeatMillis: number) {
    this.id = record.id;
    this.documents = [...record.documents];
    this.#record = record;
    this.#store = store;
    this.#clock = clock;
    this.#heartbeat = setInterval(() => void this.save(this.#record.status).catch(() => undefined), heartbeatMillis);
    this.#heartbeat.unref();
  }

  save(status: IngestionRecord['status']): Promise<void> {
    this.#record = { ...this.#record, status, updatedOn: this.#clock(), documents: [...this.documents] };
    const record = this.#record;
    this.#writes = this.#writes.catch(() => undefined).then(() => this.#store.saveIngestion(record));
    return this.#writes;
  }

  stop(): void {
    clearInterval(this.#heartbeat);
  }
}
