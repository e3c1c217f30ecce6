import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anonymousUserId } from './ids.ts';

describe('anonymousUserId', () => {
  it('sorts by creation time, so that an index by user takes new ones at its end', () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_795_500_000_000].map((now) => anonymousUserId(now));
    for (const id of ids) assert.match(id, /^anonymous-[0-9a-f]{32}$/);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(ids[0]!.slice(10, 22), (1_700_000_000_000).toString(16).padStart(12, '0'));
  });

  it('cannot be guessed from another made in the same millisecond: 80 random bits follow the time', () => {
    const made = new Set(Array.from({ length: 1_000 }, () => anonymousUserId(1_795_500_000_000).slice(22)));
    assert.equal(made.size, 1_000);
    for (const random of made) assert.equal(random.length, 20);
  });
});
