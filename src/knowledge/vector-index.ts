import type { StoredChunk } from '../storage/knowledge-ports.ts';

/**
 * The in-process search index of one knowledge base, searched exactly (every chunk is scored, so recall is 1): per
 * document a segment holding its chunk vectors normalised in one contiguous Float32Array per dimension, so that a
 * change to some documents reloads only theirs (`updated`); and a BM25 keyword index for hybrid ranking, built on
 * the first hybrid search. Scores are relevance scores in [0, 1], `(1 + cosine) / 2` as the original service's
 * vector stores give them, so its `minScore` values mean the same here.
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
  readonly revision: number;
  readonly chunks: readonly StoredChunk[];
  /** Per vector length: the normalised vectors one after the other, and which chunk each row is. */
  readonly groups: ReadonlyMap<number, { readonly vectors: Float32Array; readonly rows: readonly StoredChunk[] }>;
}

const K1 = 1.2;
const B = 0.75;

export function termsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];
}

function segmentOf(revision: number, chunks: readonly StoredChunk[]): Segment {
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
  return { revision, chunks, groups };
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
      segments.set(id, segmentOf(documentRevisions.get(id) ?? revision, documentChunks));
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
      segments.set(id, segmentOf(documentRevision, fresh.get(id) ?? []));
    }
    return new VectorIndex(revision, segments);
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
    for (const segment of this.#segments.values()) {
      const group = segment.groups.get(dimensions);
      if (!group) continue;
      const { vectors, rows } = group;
      for (let row = 0; row < rows.length; row++) {
        let dot = 0;
        const offset = row * dimensions;
        for (let d = 0; d < dimensions; d++) dot += vectors[offset + d]! * q[d]!;
        const relevance = (1 + dot) / 2;
        const chunk = rows[row]!;
        const score =
          keywordScores === undefined ? relevance : (1 - weight) * relevance + weight * (keywordScores.get(chunk) ?? 0);
        if (score >= options.minScore) best.offer(chunk, score);
      }
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

/** The k best items seen, kept sorted (k is small: top k of a retrieval). */
class TopK {
  readonly #k: number;
  readonly #items: Array<{ item: StoredChunk; score: number }> = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(item: StoredChunk, score: number): void {
    const items = this.#items;
    if (items.length === this.#k && score <= items[items.length - 1]!.score) return;
    let at = items.length;
    while (at > 0 && items[at - 1]!.score < score) at--;
    items.splice(at, 0, { item, score });
    if (items.length > this.#k) items.pop();
  }

  sorted(): ReadonlyArray<{ item: StoredChunk; score: number }> {
    return this.#items;
  }
}
