import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredChunk } from '../storage/knowledge-ports.ts';
import { VectorIndex } from './vector-index.ts';

const chunk = (documentName: string, text: string, vector: number[]): StoredChunk => ({
  documentId: documentName,
  documentName,
  chunkIndex: 0,
  text,
  embedding: Float32Array.from(vector),
});

const chunks = [
  chunk('a', 'alpha plan pricing', [1, 0, 0]),
  chunk('b', 'beta warranty terms', [0.8, 0.6, 0]),
  chunk('c', 'gamma support hours', [0, 0, 1]),
  chunk('wide', 'a vector of another model', [1, 0, 0, 0]),
];

describe('vector index', () => {
  it('ranks by (1 + cosine) / 2, keeps the top k above the minimum score, skips other dimensions', () => {
    const index = VectorIndex.of(3, chunks);
    assert.equal(index.revision, 3);
    const hits = index.search(Float32Array.from([2, 0, 0]), { maxResults: 2, minScore: 0 });
    assert.deepEqual(
      hits.map((hit) => [hit.documentName, Number(hit.score.toFixed(3))]),
      [
        ['a', 1],
        ['b', 0.9],
      ],
    );
    assert.deepEqual(
      index.search(Float32Array.from([1, 0, 0]), { maxResults: 5, minScore: 0.75 }).map((h) => h.documentName),
      ['a', 'b'],
    );
    assert.deepEqual(index.search(Float32Array.from([1, 0]), { maxResults: 5, minScore: 0 }), []);
  });

  it('hybrid ranking lifts a chunk that holds the query words', () => {
    const index = VectorIndex.of(1, chunks);
    const query = Float32Array.from([1, 0, 0]);
    const vectorOnly = index.search(query, { maxResults: 1, minScore: 0 });
    assert.equal(vectorOnly[0]?.documentName, 'a');
    const hybrid = index.search(query, {
      maxResults: 3,
      minScore: 0,
      keywords: { text: 'warranty terms', weight: 0.5 },
    });
    assert.equal(hybrid[0]?.documentName, 'b');
    assert.ok(Math.abs(hybrid[0]!.score - (0.5 * 0.9 + 0.5 * 1)) < 1e-6);
  });

  it('an update reloads only the documents whose revision moved and drops the deleted ones', () => {
    const index = VectorIndex.of(
      2,
      chunks,
      new Map([
        ['a', 1],
        ['b', 2],
        ['c', 1],
        ['wide', 1],
      ]),
    );
    assert.deepEqual(
      index.stale(
        new Map([
          ['a', 1],
          ['b', 5],
          ['c', 1],
        ]),
      ),
      ['b'],
    );
    const next = index.updated(
      5,
      new Map([
        ['a', 1],
        ['b', 5],
      ]),
      [chunk('b', 'beta renewed', [0, 1, 0])],
    );
    assert.equal(next.revision, 5);
    assert.equal(next.size, 2);
    assert.deepEqual(
      next.stale(
        new Map([
          ['a', 1],
          ['b', 5],
        ]),
      ),
      [],
    );
    const hits = next.search(Float32Array.from([0, 1, 0]), { maxResults: 3, minScore: 0 });
    assert.deepEqual(
      hits.map((hit) => [hit.documentName, hit.text]),
      [
        ['b', 'beta renewed'],
        ['a', 'alpha plan pricing'],
      ],
    );
    assert.equal(index.size, 4, 'the earlier index is unchanged');
  });

  it('an empty index finds nothing', () => {
    assert.deepEqual(VectorIndex.of(0, []).search(Float32Array.from([1]), { maxResults: 3, minScore: 0 }), []);
  });
});

describe('vector index with an approximate layer', () => {
  const DIMENSIONS = 32;
  let state = 7;
  const random = () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
  const vector = () => Array.from({ length: DIMENSIONS }, random);
  /** 40 documents of 100 chunks around 40 centres (as embeddings of texts on a few topics cluster). */
  const centres = Array.from({ length: 40 }, vector);
  const many: StoredChunk[] = centres.flatMap((centre, document) =>
    Array.from({ length: 100 }, (_, i) => ({
      documentId: `doc${document}`,
      documentName: `doc${document}`,
      chunkIndex: i,
      text: `chunk ${i} of ${document}`,
      embedding: Float32Array.from(centre, (value) => value + random() * 0.6),
    })),
  );
  const revisions = new Map(centres.map((_, document) => [`doc${document}`, 1]));

  it('finds what exact search finds (recall@5 over 100 queries)', async () => {
    const exact = VectorIndex.of(1, many, revisions);
    const approximate = VectorIndex.of(1, many, revisions);
    approximate.useApproximate(await approximate.buildApproximate());
    assert.equal(approximate.approximate, true);
    assert.equal(approximate.approximateLag, 0);
    let found = 0;
    for (let q = 0; q < 100; q++) {
      const query = Float32Array.from(centres[q % 40]!, (value) => value + random() * 0.6);
      const expected = new Set(exact.search(query, { maxResults: 5, minScore: 0 }).map((hit) => hit.text));
      for (const hit of approximate.search(query, { maxResults: 5, minScore: 0 })) if (expected.has(hit.text)) found++;
    }
    assert.ok(found / 500 >= 0.95, `recall@5 ${found / 500}`);
  });

  it('never answers chunks of documents replaced or removed after it was built, and scores new ones exactly', async () => {
    const index = VectorIndex.of(1, many, revisions);
    index.useApproximate(await index.buildApproximate());
    const replaced = new Map(revisions);
    replaced.delete('doc1');
    replaced.set('doc0', 2);
    replaced.set('late', 2);
    const query = Float32Array.from(centres[0]!);
    const next = index.updated(2, replaced, [
      {
        documentId: 'doc0',
        documentName: 'doc0',
        chunkIndex: 0,
        text: 'new doc0',
        embedding: Float32Array.from(centres[1]!),
      },
      {
        documentId: 'late',
        documentName: 'late',
        chunkIndex: 0,
        text: 'late',
        embedding: Float32Array.from(centres[0]!),
      },
    ]);
    assert.equal(next.approximate, true);
    assert.equal(next.approximateLag, 100 + 100 + 2);
    const hits = next.search(query, { maxResults: 5, minScore: 0 });
    assert.equal(hits[0]?.text, 'late');
    assert.ok(!hits.some((hit) => hit.text.startsWith('chunk') && hit.documentId === 'doc0'));
    const nearDoc1 = next.search(Float32Array.from(centres[1]!), { maxResults: 5, minScore: 0 });
    assert.equal(nearDoc1[0]?.text, 'new doc0');
    assert.ok(!nearDoc1.some((hit) => hit.documentId === 'doc1'));
  });
});
