import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePath, PathSyntaxError, resolvePath } from './paths.ts';

const data = {
  memory: { current: { input: 'Vienna', httpCalls: { weather: { list: [{ name: 'a' }, { name: 'b' }] } } } },
  n: 0,
  empty: null,
};

test('dot paths with list indexes', () => {
  assert.equal(resolvePath(data, 'memory.current.input'), 'Vienna');
  assert.equal(resolvePath(data, 'memory.current.httpCalls.weather.list[1].name'), 'b');
  assert.equal(resolvePath(data, 'memory.current.httpCalls.weather.list.0.name'), 'a');
  assert.equal(resolvePath(data, 'n'), 0);
  assert.deepEqual(parsePath('a[0][1].b'), ['a', 0, 1, 'b']);
});

test('missing steps resolve to undefined, never into the prototype chain', () => {
  assert.equal(resolvePath(data, 'memory.previous.input'), undefined);
  assert.equal(resolvePath(data, 'memory.current.httpCalls.weather.list[7].name'), undefined);
  assert.equal(resolvePath(data, 'empty.x'), undefined);
  assert.equal(resolvePath(data, 'constructor'), undefined);
  assert.equal(resolvePath(data, 'memory.constructor.constructor'), undefined);
  assert.equal(resolvePath(data, 'memory.current.input.length'), undefined, 'strings have no own properties here');
  assert.equal(resolvePath(data, '__proto__'), undefined);
});

test('malformed paths are syntax errors', () => {
  for (const path of ['', 'a..b', '.a', 'a.', '[0]', 'a[x]'])
    assert.throws(() => parsePath(path), PathSyntaxError, path);
});
