import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkText } from './chunking.ts';

const paragraphs = [
  'The warranty lasts 24 months. It covers parts and labour.',
  'Returns are accepted within 30 days. Keep the receipt.',
  'Support answers by email. Phone support is on weekdays.',
].join('\n\n');

describe('chunking', () => {
  it('recursive packs paragraphs up to the size and cuts only what is too long', () => {
    const chunks = chunkText(paragraphs, { strategy: 'recursive', size: 120, overlap: 0 });
    assert.deepEqual(chunks, [
      'The warranty lasts 24 months. It covers parts and labour.\n\nReturns are accepted within 30 days. Keep the receipt.',
      'Support answers by email. Phone support is on weekdays.',
    ]);
    for (const chunk of chunkText('word '.repeat(200), { strategy: 'recursive', size: 50, overlap: 10 }))
      assert.ok(chunk.length <= 50, chunk);
  });

  it('paragraph never puts two paragraphs in one chunk', () => {
    assert.equal(chunkText(paragraphs, { strategy: 'paragraph', size: 500, overlap: 0 }).length, 3);
  });

  it('sentence keeps sentences whole and overlaps by whole sentences', () => {
    const chunks = chunkText(paragraphs, { strategy: 'sentence', size: 70, overlap: 40 });
    for (const chunk of chunks) assert.match(chunk, /^[A-Z].*\.$/s);
    assert.ok(chunks.length >= 4);
    assert.ok(chunks.some((chunk, i) => i > 0 && chunk.startsWith(chunks[i - 1]!.split(/(?<=\.)\s+/).at(-1)!)));
  });

  it('token windows count words and punctuation and overlap by tokens', () => {
    const chunks = chunkText('a b c d e f g h', { strategy: 'token', size: 4, overlap: 2 });
    assert.deepEqual(chunks, ['a b c d', 'c d e f', 'e f g h']);
    assert.deepEqual(chunkText('Hi, you.', { strategy: 'token', size: 2, overlap: 0 }), ['Hi,', 'you.']);
  });

  it('a word longer than the size is cut hard; empty text gives no chunk', () => {
    assert.deepEqual(chunkText('x'.repeat(40), { strategy: 'recursive', size: 16, overlap: 0 }), [
      'x'.repeat(16),
      'x'.repeat(16),
      'x'.repeat(8),
    ]);
    assert.deepEqual(chunkText('  \n\n ', { strategy: 'recursive', size: 16, overlap: 0 }), []);
  });
});
