import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpiringCache } from './vault-cache.ts';

test('entries expire after the TTL and the oldest goes when the cache is full', () => {
  let now = 0;
  const cache = new ExpiringCache<string>({ ttlMs: 10, maxEntries: 2, clock: () => now });
  cache.set('a', '1');
  cache.set('b', '2');
  cache.set('c', '3');
  assert.equal(cache.size, 2);
  assert.equal(cache.get('a'), undefined, 'the oldest was dropped');
  assert.equal(cache.get('b'), '2');
  now = 10;
  assert.equal(cache.get('b'), undefined, 'expired');
  cache.set('c', '4');
  assert.equal(cache.get('c'), '4');
  cache.delete('c');
  assert.equal(cache.get('c'), undefined);
});
