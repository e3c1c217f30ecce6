import type { StoredChunk } from '../storage/knowledge-ports.ts';
import { ApproximateIndex } from './approximate-index.ts';

/**
 * The in-process search index of one knowledge base: per document a segment holding its chunk vectors normalised
 * in one contiguous Float32Array per dimension, so that a change to some documents reloads only theirs
 * (`updated`); and a BM25 keyword index for hybrid ranking, built on the first hybrid search. Scores are relevance
 * scores in [0, 1], `(1 + cosine) / 2` as the original service's vector stores give them, so its `minScore` values
 * mean the same here.
 *
 * Searched exactly (every chunk scored, recall 1) until an approximate layer is attached (`useApproximate`): an
 * HNSW index over the segments as they were when it was built. Then a search scores exactly only the HNSW's
 * candidates whose segment is still current, every chunk of the segments written since (the delta), and with
 * hybrid ranking the best keyword matches; the service rebuilds the layer when the delta grows (`approximateLag`).
 */

export interface SearchOptions {
  readonly maxResults: number;
  readonly minScore: number;
  /** With hybrid ranking: the query text and the keyword score's share (0..1). */
  readonly keywords?: { readonly text: string; readonly weight: number } | undefined;
}

export interface SearchHit {
  readonly documentId: string;
  readonly documentName: string;
  readonly chunkIndex: number;
  readonly text: string;
  readonly score: number;
}

/** One document's chunks, with the revision that wrote them. */
interface Segment {
  readonly documentId: string;
  readonly revision: number;
  readonly chunks: readonly StoredChunk[];
  /** Per vector length: the normalised vectors one after the other, and which chunk each row is. */
  readonly groups: ReadonlyMap<number, Group>;
}

interface Group {
  readonly vectors: Float32Array;
  readonly rows: readonly StoredChunk[];
}

const K1 = 1.2;
const B = 0.75;

export function termsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];
}

/** An HNSW index over the vectors of one length of some segments; its key i is `rows[i]`. */
export interface ApproximateLayer {
  readonly index: ApproximateIndex;
  readonly rows: ReadonlyArray<{ readonly segment: Segment; readonly row: number }>;
  readonly segments: ReadonlySet<Segment>;
}

function segmentOf(documentId: string, revision: number, chunks: readonly StoredChunk[]): Segment {
  const byDimensions = new Map<number, StoredChunk[]>();
  for (const chunk of chunks) {
    const rows = byDimensions.get(chunk.embedding.length) ?? [];
    rows.push(chunk);
    byDimensions.set(chunk.embedding.length, rows);
  }
  const groups = new Map<number, { vectors: Float32Array; rows: StoredChunk[] }>();
  for (const [dimensions, rows] of byDimensions) {
    const vectors = new Float32Array(dimensions * rows.length);
    for (const [row, chunk] of rows.entries()) vectors.set(normalised(chunk.embedding), row * dimensions);
    groups.set(dimensions, { vectors, rows });
  }
  return { documentId, revision, chunks, groups };
}

function byDocument(chunks: readonly StoredChunk[]): Map<string, StoredChunk[]> {
  const documents = new Map<string, StoredChunk[]>();
  for (const chunk of chunks) {
    const list = documents.get(chunk.documentId) ?? [];
    list.push(chunk);
    documents.set(chunk.documentId, list);
  }
  return documents;
}

export class VectorIndex {
  /** The knowledge base's revision this index reflects. */
  readonly revision: number;
  readonly #segments: ReadonlyMap<string, Segment>;
  #approximate: ApproximateLayer | undefined;
  /** The keyword index, built on the first hybrid search. */
  #keywords: KeywordIndex | undefined;

  /**
   * An index of `chunks`; `documentRevisions` gives each document's revision (documents without one, as in tests
   * and the bench, are taken to be of `revision`).
   */
  static of(
    revision: number,
    chunks: readonly StoredChunk[],
    documentRevisions: ReadonlyMap<string, number> = new Map(),
  ): VectorIndex {
    const segments = new Map<string, Segment>();
    for (const [id, documentChunks] of byDocument(chunks))
      segments.set(id, segmentOf(id, documentRevisions.get(id) ?? revision, documentChunks));
    return new VectorIndex(revision, segments);
  }

  private constructor(revision: number, segments: ReadonlyMap<string, Segment>) {
    this.revision = revision;
    this.#segments = segments;
  }

  /**
   * The index at a later revision: documents no longer listed dropped, the `reloaded` chunks replacing those of
   * their documents, the other segments kept as they are.
   */
  updated(revision: number, documentRevisions: ReadonlyMap<string, number>, reloaded: readonly StoredChunk[]) {
    const segments = new Map<string, Segment>();
    for (const [id, segment] of this.#segments) if (documentRevisions.has(id)) segments.set(id, segment);
    const fresh = byDocument(reloaded);
    for (const [id, documentRevision] of documentRevisions) {
      if (segments.get(id)?.revision === documentRevision) continue;
      segments.set(id, segmentOf(id, documentRevision, fresh.get(id) ?? []));
    }
    const next = new VectorIndex(revision, segments);
    next.#approximate = this.#approximate;
    return next;
  }

  /** Builds (on a worker thread) an approximate layer over this index's vectors of its most common length. */
  async buildApproximate(signal?: AbortSignal): Promise<ApproximateLayer> {
    const counts = new Map<number, number>();
    for (const segment of this.#segments.values())
      for (const [length, group] of segment.groups) counts.set(length, (counts.get(length) ?? 0) + group.rows.length);
    const [dimensions] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [0];
    const rows: Array<{ segment: Segment; row: number }> = [];
    const vectors = new Float32Array((counts.get(dimensions) ?? 0) * dimensions);
    for (const segment of this.#segments.values()) {
      const group = segment.groups.get(dimensions);
      if (!group) continue;
      vectors.set(group.vectors, rows.length * dimensions);
      for (let row = 0; row < group.rows.length; row++) rows.push({ segment, row });
    }
    const index = await ApproximateIndex.build(vectors, dimensions, signal);
    return { index, rows, segments: new Set(this.#segments.values()) };
  }

  /** Searches through `layer` from now on (it may have been built from an earlier revision of this index). */
  useApproximate(layer: ApproximateLayer): void {
    this.#approximate = layer;
  }

  /** Whether searches go through an approximate layer. */
  get approximate(): boolean {
    return this.#approximate !== undefined;
  }

  /**
   * How many chunks the approximate layer does not serve as they are: those of segments written since it was
   * built, plus its rows of segments replaced or removed since (all chunks when there is no layer).
   */
  get approximateLag(): number {
    const layer = this.#approximate;
    if (!layer) return this.size;
    let lag = 0;
    for (const segment of this.#segments.values()) if (!layer.segments.has(segment)) lag += segment.chunks.length;
    for (const segment of layer.segments)
      if (this.#segments.get(segment.documentId) !== segment) lag += segment.chunks.length;
    return lag;
  }

  /** The documents whose chunks this index does not hold at the given revisions. */
  stale(documentRevisions: ReadonlyMap<string, number>): string[] {
    return [...documentRevisions]
      .filter(([id, revision]) => this.#segments.get(id)?.revision !== revision)
      .map(([id]) => id);
  }

  get size(): number {
    let size = 0;
    for (const segment of this.#segments.values()) size += segment.chunks.length;
    return size;
  }

  /** The vector lengths of the chunks (one, unless the embedding model changed between ingestions). */
  get dimensions(): number[] {
    const dimensions = new Set<number>();
    for (const segment of this.#segments.values()) for (const length of segment.groups.keys()) dimensions.add(length);
    return [...dimensions];
  }

  search(query: Float32Array, options: SearchOptions): SearchHit[] {
    const dimensions = query.length;
    const q = normalised(query);
    const keywordScores = options.keywords
      ? (this.#keywords ??= new KeywordIndex([...this.#segments.values()].flatMap((segment) => segment.chunks))).scores(
          options.keywords.text,
        )
      : undefined;
    const weight = options.keywords?.weight ?? 0;
    const best = new TopK(options.maxResults);
    const offer = (chunk: StoredChunk, dot: number) => {
      const relevance = (1 + dot) / 2;
      const score =
        keywordScores === undefined ? relevance : (1 - weight) * relevance + weight * (keywordScores.get(chunk) ?? 0);
      if (score >= options.minScore) best.offer(chunk, score);
    };
    const scoreRow = ({ vectors, rows }: Group, row: number) => {
      let dot = 0;
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d++) dot += vectors[offset + d]! * q[d]!;
      offer(rows[row]!, dot);
    };
    const scoreSegment = (segment: Segment) => {
      const group = segment.groups.get(dimensions);
      if (group) for (let row = 0; row < group.rows.length; row++) scoreRow(group, row);
    };
    const layer = this.#approximate;
    if (layer?.index.dimensions === dimensions) {
      const candidates = Math.max(options.maxResults * APPROXIMATE_CANDIDATES_PER_RESULT, MIN_APPROXIMATE_CANDIDATES);
      for (const key of layer.index.nearest(q, candidates)) {
        const { segment, row } = layer.rows[key]!;
        if (this.#segments.get(segment.documentId) === segment) scoreRow(segment.groups.get(dimensions)!, row);
      }
      for (const segment of this.#segments.values()) if (!layer.segments.has(segment)) scoreSegment(segment);
      // Chunks that rank by their keywords although their vectors are not among the nearest (those offered already
      // are in `best`, or were turned away with the same score).
      if (keywordScores) {
        const offered = new Set(best.sorted().map(({ item }) => item));
        const keywordBest = new TopK(candidates);
        for (const [chunk, score] of keywordScores) keywordBest.offer(chunk, score);
        for (const { item: chunk } of keywordBest.sorted())
          if (!offered.has(chunk) && chunk.embedding.length === dimensions) offer(chunk, dotOf(chunk.embedding, q));
      }
    } else {
      for (const segment of this.#segments.values()) scoreSegment(segment);
    }
    return best.sorted().map(({ item: chunk, score }) => ({
      documentId: chunk.documentId,
      documentName: chunk.documentName,
      chunkIndex: chunk.chunkIndex,
      text: chunk.text,
      score,
    }));
  }
}

/**
 * HNSW candidates scored exactly per result asked for (at least the minimum): what keeps recall high. Measured at
 * 100,000 chunks of 256 dimensions (bench data, hashed words: close to the hardest case for HNSW): recall@5 0.91
 * with 64 or 128 candidates, 0.955 with 256, 0.985 with 512 at twice 256's latency.
 */
const APPROXIMATE_CANDIDATES_PER_RESULT = 32;
const MIN_APPROXIMATE_CANDIDATES = 256;

/** The cosine of a stored (not normalised) vector and a normalised one. */
function dotOf(vector: Float32Array, unit: Float32Array): number {
  let dot = 0;
  let sum = 0;
  for (let d = 0; d < vector.length; d++) {
    dot += vector[d]! * unit[d]!;
    sum += vector[d]! * vector[d]!;
  }
  return sum === 0 ? 0 : dot / Math.sqrt(sum);
}

/** BM25 over the chunks' words (k1 1.2, b 0.75). */
class KeywordIndex {
  /** term -> [chunk, term frequency] pairs, flattened. */
  readonly #postings = new Map<string, number[]>();
  readonly #chunks: readonly StoredChunk[];
  readonly #lengths: Uint32Array;
  readonly #averageLength: number;
  readonly #size: number;

  constructor(chunks: readonly StoredChunk[]) {
    this.#chunks = chunks;
    this.#size = chunks.length;
    this.#lengths = new Uint32Array(chunks.length);
    let total = 0;
    for (const [i, chunk] of chunks.entries()) {
      const frequencies = new Map<string, number>();
      const terms = termsOf(chunk.text);
      for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
      for (const [term, count] of frequencies) {
        const list = this.#postings.get(term) ?? [];
        list.push(i, count);
        this.#postings.set(term, list);
      }
      this.#lengths[i] = terms.length;
      total += terms.length;
    }
    this.#averageLength = chunks.length === 0 ? 0 : total / chunks.length;
  }

  /** BM25 of the query's terms per chunk, divided by the best one (so in [0, 1]). */
  scores(text: string): Map<StoredChunk, number> {
    const scores = new Map<StoredChunk, number>();
    const n = this.#size;
    for (const term of new Set(termsOf(text))) {
      const postings = this.#postings.get(term);
      if (!postings) continue;
      const documentFrequency = postings.length / 2;
      const idf = Math.log(1 + (n - documentFrequency + 0.5) / (documentFrequency + 0.5));
      for (let i = 0; i < postings.length; i += 2) {
        const chunk = postings[i]!;
        const tf = postings[i + 1]!;
        const norm = tf + K1 * (1 - B + (B * this.#lengths[chunk]!) / (this.#averageLength || 1));
        const stored = this.#chunks[chunk]!;
        scores.set(stored, (scores.get(stored) ?? 0) + (idf * tf * (K1 + 1)) / norm);
      }
    }
    let top = 0;
    for (const score of scores.values()) top = Math.max(top, score);
    if (top > 0) for (const [chunk, score] of scores) scores.set(chunk, score / top);
    return scores;
  }
}

function normalised(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  if (norm > 0) for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / norm;
  return out;
}

/** The k best chunks seen, kept sorted; equal scores in document and chunk order, so every path ranks alike. */
class TopK {
  readonly #k: number;
  readonly #items: Array<{ item: StoredChunk; score: number }> = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(item: StoredChunk, score: number): void {
    const items = this.#items;
    if (items.length === this.#k && !ranksBefore(item, score, items[items.length - 1]!)) return;
    let at = items.length;
    while (at > 0 && ranksBefore(item, score, items[at - 1]!)) at--;
    items.splice(at, 0, { item, score });
    if (items.length > this.#k) items.pop();
  }

  sorted(): ReadonlyArray<{ item: StoredChunk; score: number }> {
    return this.#items;
  }
}

function ranksBefore(item: StoredChunk, score: number, other: { item: StoredChunk; score: number }): boolean {
  if (score !== other.score) return score > other.score;
  if (item.documentId !== other.item.documentId) return item.documentId < other.item.documentId;
  return item.chunkIndex < other.item.chunkIndex;
}
