import type { ChunkStrategy } from '../resources/schemas/rag.ts';

/**
 * Splits a document's text into chunks (a knowledge base's `chunkStrategy`, `chunkSize`, `chunkOverlap`):
 * - `recursive`: pieces as large as fit, cut at paragraph, then line, sentence and word boundaries (a piece is cut
 *   further only when it is larger than `chunkSize`), packed up to `chunkSize` characters;
 * - `paragraph`: one chunk per paragraph (never two in one chunk); a paragraph longer than `chunkSize` is cut as
 *   `recursive` cuts it;
 * - `sentence`: whole sentences packed up to `chunkSize` characters, across paragraphs;
 * - `token`: windows of `chunkSize` tokens (words and punctuation marks) that overlap by `chunkOverlap` tokens.
 * Neighbouring chunks of the character strategies share up to `chunkOverlap` characters of whole pieces.
 */

export interface ChunkingOptions {
  readonly strategy: ChunkStrategy;
  readonly size: number;
  readonly overlap: number;
}

/** Boundaries from coarse to fine; each split keeps the separator at the end of the piece before it. */
const PARAGRAPHS = /(?<=\n[ \t]*\n)(?=\S)/;
const LINES = /(?<=\n)/;
const SENTENCES = /(?<=[.!?。！？]["'”’)\]]*\s+)/u;
const WORDS = /(?<=\s)(?=\S)/;
const RECURSIVE = [PARAGRAPHS, LINES, SENTENCES, WORDS] as const;

export function chunkText(text: string, options: ChunkingOptions): string[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const chunks =
    options.strategy === 'token'
      ? tokenWindows(normalised, options.size, options.overlap)
      : options.strategy === 'paragraph'
        ? normalised.split(PARAGRAPHS).flatMap((paragraph) => pack(pieces(paragraph, options.size, 1), options))
        : options.strategy === 'sentence'
          ? pack(
              normalised.split(SENTENCES).flatMap((sentence) => pieces(sentence, options.size, RECURSIVE.length - 1)),
              options,
            )
          : pack(pieces(normalised, options.size, 0), options);
  return chunks.map((chunk) => chunk.trim()).filter((chunk) => chunk !== '');
}

/** `text` cut at the boundaries from `level` on until every piece fits `size` (words longer than it are cut hard). */
function pieces(text: string, size: number, level: number): string[] {
  if (text.length <= size) return [text];
  const boundary = RECURSIVE[level];
  if (boundary === undefined) {
    const cut: string[] = [];
    for (let at = 0; at < text.length; at += size) cut.push(text.slice(at, at + size));
    return cut;
  }
  const parts = text.split(boundary);
  if (parts.length === 1) return pieces(text, size, level + 1);
  return parts.flatMap((part) => pieces(part, size, level + 1));
}

/** Joins pieces into chunks of at most `size` characters, starting each next chunk with up to `overlap` of the last. */
function pack(parts: readonly string[], { size, overlap }: ChunkingOptions): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let length = 0;
  for (const part of parts) {
    if (length + part.length > size && current.length > 0) {
      chunks.push(current.join(''));
      const kept: string[] = [];
      let keptLength = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const piece = current[i]!;
        if (keptLength + piece.length > overlap || keptLength + piece.length + part.length > size) break;
        kept.unshift(piece);
        keptLength += piece.length;
      }
      current = kept;
      length = keptLength;
    }
    current.push(part);
    length += part.length;
  }
  if (current.length > 0) chunks.push(current.join(''));
  return chunks;
}

/** Windows of `size` tokens stepping by `size - overlap`, each the text from its first token to its last. */
function tokenWindows(text: string, size: number, overlap: number): string[] {
  const tokens = [...text.matchAll(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu)];
  const windows: string[] = [];
  const step = Math.max(1, size - overlap);
  for (let start = 0; start < tokens.length; start += step) {
    const first = tokens[start]!;
    const last = tokens[Math.min(tokens.length, start + size) - 1]!;
    windows.push(text.slice(first.index, last.index + last[0].length));
    if (start + size >= tokens.length) break;
  }
  return windows;
}
