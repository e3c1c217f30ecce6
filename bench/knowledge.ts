/**
 * Knowledge bases: ingestion throughput (documents through the REST API: upload, text extraction, chunking,
 * embedding on a loopback OpenAI-embeddings server, store write) and search latency at 100,000 chunks: the REST
 * search exact (while the service builds its approximate index) and through the approximate (HNSW) index, with
 * recall@k of the service's answers against a brute-force ranking computed here, and the in-process index alone.
 */
import { randomBytes } from 'node:crypto';
import { VectorIndex } from '../src/knowledge/vector-index.ts';
import type { SettingName } from '../src/settings.ts';
import { openStorage } from '../src/storage/open.ts';
import { fakeEmbedding, startFakeEmbeddings } from '../test/support/fake-llm/embeddings.ts';
import { expectStatus, idFromLocation, type BenchApi } from './api.ts';
import type { LoadSpec, Measurement } from './measure.ts';

const DIMENSIONS = 256;
const INGEST_DOCUMENTS = 200;
const INGEST_BATCH = 20;
const DOCUMENT_WORDS = 350;
const SEARCH_CHUNKS = 100_000;
const CHUNKS_PER_DOCUMENT = 1000;
const CHUNK_WORDS = 20;
const TOP_K = 5;
const RECALL_QUERIES = 50;
const INDEX_QUERIES = 200;
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => `term${i.toString(36)}`);

export interface KnowledgeFigures {
  readonly ingestion: {
    readonly documents: number;
    readonly chunks: number;
    readonly seconds: number;
    readonly documentsPerSec: number;
    readonly chunksPerSec: number;
  };
  readonly search: {
    readonly chunks: number;
    readonly dimensions: number;
    /** First search after the chunks were written: loading them and building the index, then the search. */
    readonly firstSearchMs: number;
    /** From the first search until the service searches through its approximate index (built in the background). */
    readonly approximateBuildMs: number;
    /** REST search, one at a time, every chunk scored (before the approximate index was ready). */
    readonly exactRestMs: { readonly p50: number; readonly p99: number };
    /** Share of the brute-force top k the exact search answered (1 by construction: a check of the path). */
    readonly exactRecallAtK: number;
    /** A search right after one more document was ingested: only that document's chunks are loaded. */
    readonly searchAfterIngestMs: number;
    /** REST search through the approximate index, one at a time (query embedded on the loopback server, top k). */
    readonly rest: Measurement;
    /** The in-process index alone (exact), one query at a time. */
    readonly indexMs: { readonly p50: number; readonly p99: number };
    /** Share of the brute-force top k the service answered through its approximate index. */
    readonly recallAtK: number;
    readonly k: number;
  };
}

/** A text of `count` words drawn from the vocabulary with a seeded generator (same run, same texts). */
function words(count: number, next: () => number): string {
  return Array.from({ length: count }, () => VOCABULARY[Math.floor(next() * VOCABULARY.length)]).join(' ');
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function knowledgeBase(embeddingsUrl: string) {
  return {
    name: `bench-${randomBytes(3).toString('hex')}`,
    embeddingParameters: { apiKey: 'bench', baseUrl: `${embeddingsUrl}/v1`, dimensions: String(DIMENSIONS) },
    chunkSize: 512,
    chunkOverlap: 64,
    maxResults: TOP_K,
    minScore: 0,
  };
}

async function waitForIngestion(api: BenchApi, kbId: string, ingestionId: string): Promise<number> {
  for (;;) {
    const answer = expectStatus(await api.get(`/ragstore/rags/${kbId}/ingestion/${ingestionId}/status`), 200, 'status');
    const { status, documents } = answer.json as { status: string; documents: Array<{ chunks?: number }> };
    if (status === 'completed') return documents.reduce((sum, d) => sum + (d.chunks ?? 0), 0);
    if (status !== 'pending' && status !== 'processing') throw new Error(`ingestion ended ${answer.text}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function ingestionThroughput(api: BenchApi, embeddingsUrl: string): Promise<KnowledgeFigures['ingestion']> {
  const kbId = idFromLocation(
    expectStatus(await api.post('/ragstore/rags', knowledgeBase(embeddingsUrl)), 201, 'create').headers.get('location'),
  );
  const next = seeded(7);
  const began = performance.now();
  const batches: Promise<number>[] = [];
  for (let start = 0; start < INGEST_DOCUMENTS; start += INGEST_BATCH) {
    const documents = Array.from({ length: INGEST_BATCH }, (_, i) => ({
      name: `doc-${start + i}.txt`,
      content: words(DOCUMENT_WORDS, next),
    }));
    const answer = expectStatus(await api.post(`/ragstore/rags/${kbId}/ingest`, { documents }), 202, 'ingest');
    batches.push(waitForIngestion(api, kbId, answer.json.ingestionId));
  }
  const chunks = (await Promise.all(batches)).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - began) / 1000;
  return {
    documents: INGEST_DOCUMENTS,
    chunks,
    seconds,
    documentsPerSec: INGEST_DOCUMENTS / seconds,
    chunksPerSec: chunks / seconds,
  };
}

/**
 * Brute-force cosine (float64) of every stored vector for one query: the reference for recall. Answers each
 * vector's score and the k-th best score (ties at the k-th place all count as right answers).
 */
function bruteForce(vectors: readonly Float32Array[], query: Float32Array, k: number) {
  const norm = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1;
  const q = norm(query);
  const scores = vectors.map((v) => {
    let dot = 0;
    for (let d = 0; d < v.length; d++) dot += v[d]! * query[d]!;
    return dot / (norm(v) * q);
  });
  const kth = [...scores].sort((a, b) => b - a)[k - 1] ?? Number.NEGATIVE_INFINITY;
  return { scores, kth };
}

function percentiles(timings: readonly number[]): { p50: number; p99: number } {
  const sorted = [...timings].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)]!, p99: sorted[Math.ceil(sorted.length * 0.99) - 1]! };
}

/** Waits until the service searches the knowledge base through its approximate index; answers when (ms clock). */
async function approximateReady(api: BenchApi, kbId: string): Promise<number> {
  for (;;) {
    const state = expectStatus(await api.get(`/ragstore/rags/${kbId}/index`), 200, 'index').json as {
      search: string;
      building: boolean;
    };
    if (state.search === 'approximate' && !state.building) return performance.now();
    if (state.search === 'exact' && !state.building) throw new Error('the service builds no approximate index');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs a load against the service (in another process, CPU per request included) and answers its figures. */
export type MeasureSearch = (spec: LoadSpec) => Promise<Measurement>;

async function searchAt100k(
  api: BenchApi,
  embeddingsUrl: string,
  storeSettings: Partial<Record<SettingName, string>>,
  duration: number,
  measureSearch: MeasureSearch,
): Promise<KnowledgeFigures['search']> {
  const kbId = idFromLocation(
    expectStatus(await api.post('/ragstore/rags', knowledgeBase(embeddingsUrl)), 201, 'create').headers.get('location'),
  );
  // The chunks are written through a second connection to the service's store (embedding 100,000 texts over
  // HTTP would measure the fake embedding server); their vectors are the ones the fake server would answer.
  const storage = await openStorage(
    storeSettings['svc.datastore.type'] === 'postgres'
      ? { type: 'postgres', url: storeSettings['svc.datastore.postgres.url']! }
      : { type: 'sqlite', path: storeSettings['svc.datastore.sqlite.path']! },
  );
  const next = seeded(11);
  const texts: string[] = [];
  const vectors: Float32Array[] = [];
  try {
    for (let document = 0; document * CHUNKS_PER_DOCUMENT < SEARCH_CHUNKS; document++) {
      const chunks = Array.from({ length: CHUNKS_PER_DOCUMENT }, () => {
        const text = words(CHUNK_WORDS, next);
        const embedding = Float32Array.from(fakeEmbedding(text, DIMENSIONS));
        texts.push(text);
        vectors.push(embedding);
        return { text, embedding };
      });
      const now = Date.now();
      await storage.knowledge.replaceDocument(
        kbId,
        {
          id: `bench${document.toString().padStart(19, '0')}`,
          name: `part-${document}.txt`,
          contentType: 'text/plain',
          sizeBytes: 0,
          contentHash: '',
          chunkCount: chunks.length,
          ingestionId: 'bench',
          createdOn: now,
          updatedOn: now,
        },
        chunks,
      );
    }

    const query = (i: number) => words(6, seeded(1000 + i));
    const search = async (text: string) =>
      expectStatus(await api.post(`/ragstore/rags/${kbId}/search`, { query: text }), 200, 'search').json
        .results as Array<{ documentName: string; chunkIndex: number }>;
    const first = performance.now();
    await search(query(0));
    const firstSearchMs = performance.now() - first;

    /** Recall@k of the REST search over RECALL_QUERIES queries, and each search's latency. */
    const recallOfSearch = async () => {
      let found = 0;
      const timings: number[] = [];
      for (let i = 0; i < RECALL_QUERIES; i++) {
        const text = query(i);
        const { scores, kth } = bruteForce(vectors, Float32Array.from(fakeEmbedding(text, DIMENSIONS)), TOP_K);
        const started = performance.now();
        const hits = await search(text);
        timings.push(performance.now() - started);
        for (const hit of hits) {
          const position = Number(hit.documentName.slice(5, -4)) * CHUNKS_PER_DOCUMENT + hit.chunkIndex;
          if (scores[position]! >= kth - 1e-6) found++;
        }
      }
      return { recall: found / (RECALL_QUERIES * TOP_K), latency: percentiles(timings) };
    };
    // The first search started the approximate index's build; searches are exact until it is ready (if the build
    // is quick, some of these are approximate already: the figure then says so through its recall).
    const exact = await recallOfSearch();
    const approximateBuildMs = (await approximateReady(api, kbId)) - first;
    const approximate = await recallOfSearch();

    const added = expectStatus(
      await api.post(`/ragstore/rags/${kbId}/ingest`, {
        documents: [{ name: 'late.txt', content: words(DOCUMENT_WORDS, next) }],
      }),
      202,
      'ingest one more document',
    );
    await waitForIngestion(api, kbId, added.json.ingestionId);
    const afterIngest = performance.now();
    await search(query(2));
    const searchAfterIngestMs = performance.now() - afterIngest;

    const rest = await measureSearch({
      connections: 1,
      duration,
      warmupSeconds: Math.min(1, duration / 5),
      body: JSON.stringify({ query: query(1) }),
      paths: [`/ragstore/rags/${kbId}/search`],
    });

    const { revision, documents } = await storage.knowledge.documentRevisions(kbId);
    const index = VectorIndex.of(revision, await storage.knowledge.loadChunks(kbId), documents);
    const timings: number[] = [];
    for (let i = 0; i < INDEX_QUERIES; i++) {
      const vector = Float32Array.from(fakeEmbedding(query(i), DIMENSIONS));
      const started = performance.now();
      index.search(vector, { maxResults: TOP_K, minScore: 0 });
      timings.push(performance.now() - started);
    }
    return {
      chunks: SEARCH_CHUNKS,
      dimensions: DIMENSIONS,
      firstSearchMs,
      approximateBuildMs,
      exactRestMs: exact.latency,
      exactRecallAtK: exact.recall,
      searchAfterIngestMs,
      rest,
      indexMs: percentiles(timings),
      recallAtK: approximate.recall,
      k: TOP_K,
    };
  } finally {
    await storage.close();
  }
}

export async function knowledgeWorkload(
  api: BenchApi,
  storeSettings: Partial<Record<SettingName, string>>,
  duration: number,
  measureSearch: MeasureSearch,
): Promise<KnowledgeFigures> {
  const embeddings = await startFakeEmbeddings();
  try {
    const ingestion = await ingestionThroughput(api, embeddings.url);
    const search = await searchAt100k(api, embeddings.url, storeSettings, duration, measureSearch);
    return { ingestion, search };
  } finally {
    await embeddings.close();
  }
}
