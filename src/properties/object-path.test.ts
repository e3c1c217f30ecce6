import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileObjectPath, ObjectPathEvaluationError, ObjectPathSyntaxError } from './object-path.ts';

const data = {
  properties: {
    count: 3,
    price: 2.5,
    name: 'Ada',
    flag: true,
    big: 9_007_199_254_740_000,
    profile: { city: 'Vienna' },
  },
  memory: {
    current: {
      input: 'Vienna',
      httpCalls: {
        currentWeather: { main: { temp: 12.3 }, weather: [{ description: 'light rain' }, { description: 'fog' }] },
        'my-call': { value: 'hyphen' },
      },
    },
  },
  context: { userInfo: { id: 'u-1' } },
};

const evaluate = (path: string, on: unknown = data) => compileObjectPath(path).evaluate(on);

test('dot paths and list indexes resolve from the data root, keeping the value and its type', () => {
  assert.equal(evaluate('memory.current.input'), 'Vienna');
  assert.equal(evaluate('memory.current.httpCalls.currentWeather.main.temp'), 12.3);
  assert.equal(evaluate('memory.current.httpCalls.currentWeather.weather[1].description'), 'fog');
  assert.equal(evaluate('properties.flag'), true);
  assert.deepEqual(evaluate('properties.profile'), { city: 'Vienna' });
  assert.equal(evaluate('context.userInfo.id'), 'u-1');
  assert.equal(evaluate('  properties.name  '), 'Ada', 'surrounding spaces are ignored');
  assert.equal(
    evaluate('memory.current.httpCalls.my-call.value'),
    'hyphen',
    'a hyphen inside a key is part of the key',
  );
});

test('a path that names nothing evaluates to undefined', () => {
  assert.equal(evaluate('properties.missing'), undefined);
  assert.equal(evaluate('memory.current.httpCalls.currentWeather.weather[5].description'), undefined);
  assert.equal(evaluate('memory.current.input.length'), undefined, 'no property of a string is reachable');
  assert.equal(evaluate('properties.constructor'), undefined, 'nothing on the prototype chain is reachable');
});

test('arithmetic: integers stay integers, a fraction on either side gives a float', () => {
  assert.equal(evaluate('properties.count+1'), 4);
  assert.equal(evaluate('properties.count-1'), 2);
  assert.equal(evaluate('properties.count - 1'), 2);
  assert.equal(evaluate('properties.count + 10 - 4'), 9, 'left to right');
  assert.equal(evaluate('properties.price+1'), 3.5);
  assert.equal(evaluate('properties.count+0.5'), 3.5);
  assert.equal(evaluate('properties.price-0.5'), 2);
  assert.equal(evaluate('properties.count+properties.price'), 5.5, 'two paths');
  assert.equal(evaluate('properties.big+1'), 9_007_199_254_740_001);
  assert.equal(evaluate('memory.current.httpCalls.currentWeather.main.temp+1'), 13.3);
});

test('a left side that resolves to nothing yields the right side; a missing right side yields the left side', () => {
  assert.equal(evaluate('properties.count+1', {}), 1);
  assert.equal(evaluate('properties.count-1', {}), 1, 'the right literal, as upstream');
  assert.equal(evaluate('properties.count+1', { properties: { count: null } }), 1);
  assert.equal(evaluate('properties.count+properties.missing'), 3);
  assert.equal(evaluate('properties.missing+properties.other'), undefined);
});

test('+ with a non-number concatenates text', () => {
  assert.equal(evaluate("memory.current.input+'!'"), 'Vienna!');
  assert.equal(evaluate("'Hello '+properties.name+'!'"), 'Hello Ada!');
  assert.equal(evaluate('properties.name+1'), 'Ada1');
  assert.equal(evaluate("properties.count+'1'"), '31', 'a quoted number is text');
  assert.equal(evaluate('properties.flag+properties.name'), 'trueAda');
  assert.equal(evaluate("properties.profile+'.'"), '{"city":"Vienna"}.');
  assert.equal(evaluate("memory.current.input + ' + more'"), 'Vienna + more', 'operators inside quotes are text');
});

test('- with a non-number is an evaluation error', () => {
  assert.throws(() => evaluate('properties.name-1'), ObjectPathEvaluationError);
  assert.throws(() => evaluate("properties.count-'x'"), ObjectPathEvaluationError);
});

test('literals are returned as they are', () => {
  assert.equal(evaluate("'fixed text'"), 'fixed text');
  assert.equal(evaluate("''"), '');
  assert.equal(evaluate("'it\\'s a \\\\ path.like[0]+1'"), "it's a \\ path.like[0]+1");
  assert.equal(evaluate('42'), 42);
  assert.equal(evaluate('-1.5'), -1.5);
});

test('malformed paths are refused when compiled', () => {
  for (const path of [
    '',
    '   ',
    'a..b',
    '.a',
    'a.',
    'a[x]',
    '[0]',
    'a+',
    'a +  ',
    '+a',
    "'open",
    "a'b'",
    "'a' 'b'",
    'a + - b',
  ]) {
    assert.throws(() => compileObjectPath(path), ObjectPathSyntaxError, JSON.stringify(path));
  }
});

test('a compiled path is reused on different data', () => {
  const path = compileObjectPath('properties.count+1');
  assert.equal(path.source, 'properties.count+1');
  assert.equal(path.evaluate({ properties: { count: 1 } }), 2);
  assert.equal(path.evaluate({ properties: { count: 41 } }), 42);
});

test("'input' is the current step's input unless the data has an input of its own (a context)", () => {
  assert.equal(evaluate('input'), 'Vienna');
  assert.equal(evaluate("input+'!'"), 'Vienna!');
  assert.deepEqual(evaluate('input', { ...data, input: { city: 'Graz' } }), { city: 'Graz' });
  assert.equal(evaluate('input.city', { ...data, input: { city: 'Graz' } }), 'Graz');
  assert.equal(evaluate('input', { properties: {} }), undefined);
});
