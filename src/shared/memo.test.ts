import assert from 'node:assert/strict';
import { it } from 'node:test';
import { memoize } from './memo.ts';

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
