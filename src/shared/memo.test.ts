import assert from 'node:assert/strict';
import { it } from 'node:test';
import { memoGroup, memoize } from './memo.ts';

it('computes each key once, keeps null results, drops the least recently used key beyond the bound', () => {
  const computed: string[] = [];
  const length = memoize(
    (key) => {
      computed.push(key);
      return key === 'none' ? null : key.length;
    },
    { max: 2, cacheable: (key) => key !== 'huge' },
  );
  assert.equal(length('ab'), 2);
  assert.equal(length('none'), null);
  assert.equal(length('ab'), 2);
  assert.equal(length('none'), null);
  assert.deepEqual(computed, ['ab', 'none']);
  length('xyz'); // 'ab' was used least recently
  length('none');
  length('ab');
  assert.deepEqual(computed, ['ab', 'none', 'xyz', 'ab']);
  length('huge');
  length('huge');
  assert.deepEqual(computed.slice(4), ['huge', 'huge'], 'a key that is not cacheable is computed every time');
});

it('memos of a group keep their results apart and share one bound', () => {
  const memo = memoGroup(2);
  const calls: string[] = [];
  const upper = memo((key) => {
    calls.push(`upper ${key}`);
    return key.toUpperCase();
  });
  const size = memo((key) => {
    calls.push(`size ${key}`);
    return key.length;
  });
  assert.equal(upper('ab'), 'AB');
  assert.equal(size('ab'), 2, 'the same key in another memo is its own result');
  assert.equal(upper('ab'), 'AB');
  assert.deepEqual(calls, ['upper ab', 'size ab']);
  size('xyz'); // the group holds two results: size('ab') was used least recently and goes
  upper('ab');
  size('ab');
  assert.deepEqual(calls, ['upper ab', 'size ab', 'size xyz', 'size ab']);
});
