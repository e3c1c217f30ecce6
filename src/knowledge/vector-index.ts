import type { StoredChunk } from '../storage/knowledge-ports.ts';

/**
 * The in-process search index of one knowledge base: its chunk vectors normalised into one contiguous Float32Array
 * per dimension, searched exactly (every chunk is scored, so recall is 1), plus a BM25 keyword index for hybrid
 * ranking (built on the first hybrid search). Scores are relevance scores in [0, 1], `(1 + cosine) / 2` as the original service's vector stores give
 * them, so its `minScore` values mean the same here. Built from the store when a search finds the knowledge base's
 * revision changed (`KnowledgeService`).
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

interface Group {
  readonly dimensions: number;
  readonly vectors: Float32Array;
  readonly members: number[];
}

const K1 = 1.2;
const B = 0.75;

export function termsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];
}

export class VectorIndex {
  readonly revision: number;
  readonly #chunks: readonly StoredChunk[];
  readonly #groups = new Map<number, Group>();
  /** The keyword index, built on the first hybrid search. */
  #keywords: KeywordIndex | undefined;

  constructor(revision: number, chunks: readonly StoredChunk[]) {
    this.revision = revision;
    this.#chunks = chunks;
    const byDimensions = new Map<number, number[]>();
    for (const [i, chunk] of chunks.entries()) {
      const members = byDimensions.get(chunk.embedding.length) ?? [];
      members.push(i);
      byDimensions.set(chunk.embedding.length, members);
    }
    for (const [dimensions, members] of byDimensions) {
      const vectors = new Float32Array(dimensions * members.length);
      for (const [row, i] of members.entries()) vectors.set(normalised(chunks[i]!.embedding), row * dimensions);
      this.#groups.set(dimensions, { dimensions, vectors, members });
    }
  }

  get size(): number {
    return this.#chunks.length;
  }

  /** The vector lengths of the chunks (one, unless the embedding model changed between ingestions). */
  get dimensions(): number[] {
    return [...this.#groups.keys()];
  }

  search(query: Float32Array, options: SearchOptions): SearchHit[] {
    const group = this.#groups.get(query.length);
    if (!group) return [];
    const q = normalised(query);
    const { dimensions, vectors, members } = group;
    const keywordScores = options.keywords
      ? (this.#keywords ??= new KeywordIndex(this.#chunks)).scores(options.keywords.text)
      : undefined;
    const weight = options.keywords?.weight ?? 0;
    const best = new TopK(options.maxResults);
    for (let row = 0; row < members.length; row++) {
      let dot = 0;
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d++) dot += vectors[offset + d]! * q[d]!;
      const relevance = (1 + dot) / 2;
      const chunk = members[row]!;
      const score =
        keywordScores === undefined ? relevance : (1 - weight) * relevance + weight * (keywordScores.get(chunk) ?? 0);
      if (score >= options.minScore) best.offer(chunk, score);
    }
    return best.sorted().map(({ item, score }) => {
      const chunk = this.#chunks[item]!;
      return {
        documentId: chunk.documentId,
        documentName: chunk.documentName,
        chunkIndex: chunk.chunkIndex,
        text: chunk.text,
        score,
      };
    });
  }
}

/** BM25 over the chunks' words (k1 1.2, b 0.75). */
class KeywordIndex {
  /** term -> [chunk, term frequency] pairs, flattened. */
  readonly #postings = new Map<string, number[]>();
  readonly #lengths: Uint32Array;
  readonly #averageLength: number;
  readonly #size: number;

  constructor(chunks: readonly StoredChunk[]) {
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
  scores(text: string): Map<number, number> {
    const scores = new Map<number, number>();
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
        scores.set(chunk, (scores.get(chunk) ?? 0) + (idf * tf * (K1 + 1)) / norm);
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
  readonly #items: Array<{ item: number; score: number }> = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(item: number, score: number): void {
    const items = this.#items;
    if (items.length === this.#k && score <= items[items.length - 1]!.score) return;
    let at = items.length;
    while (at > 0 && items[at - 1]!.score < score) at--;
    items.splice(at, 0, { item, score });
    if (items.length > this.#k) items.pop();
  }

  sorted(): ReadonlyArray<{ item: number; score: number }> {
    return this.#items;
  }
}
