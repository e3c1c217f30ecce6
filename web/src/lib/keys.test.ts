import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keyed } from './keys.ts';

const keysOf = (items: string[]) => keyed(items, (s) => s).map((k) => k.key);

describe('keyed lists', () => {
  it('keeps unique keys and numbers the repeats', () => {
    assert.deepEqual(keysOf(['a', 'b', 'a', 'a']), ['a', 'b', 'a#2', 'a#3']);
    assert.deepEqual(
      keyed([{ n: 1 }, { n: 2 }], (x) => String(x.n)).map((k) => k.item.n),
      [1, 2],
    );
  });

  it('keeps an item’s key when an earlier, different item goes', () => {
    assert.deepEqual(keysOf(['a', 'b']), keysOf(['x', 'a', 'b']).slice(1));
  });
});
