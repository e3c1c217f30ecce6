import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffSummary, lineDiff } from './diff.ts';

describe('line diff', () => {
  it('marks added and removed lines with their line numbers', () => {
    const d = lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne');
    assert.deepEqual(
      d.map((l) => `${l.kind[0]}${l.text}`),
      ['sa', 'aB', 'rb', 'sc', 'sd', 'ae'],
    );
    assert.deepEqual(diffSummary(d), { added: 2, removed: 1 });
    assert.equal(d.find((l) => l.text === 'e')?.newLine, 5);
    assert.equal(d.find((l) => l.text === 'b')?.oldLine, 2);
  });

  it('finds nothing between equal texts', () => {
    const text = JSON.stringify({ a: [1, 2] }, null, 2);
    assert.ok(lineDiff(text, text).every((l) => l.kind === 'same'));
  });
});
