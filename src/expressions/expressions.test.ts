import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  containsSequence,
  ExpressionSyntaxError,
  formatExpressions,
  matches,
  parseExpressions,
} from './expressions.ts';

const one = (text: string) => parseExpressions(text)[0]!;

test('parses and prints nested lists canonically', () => {
  assert.equal(
    formatExpressions(parseExpressions('greeting(hello),unknown( Vienna )')),
    'greeting(hello), unknown(Vienna)',
  );
  assert.equal(formatExpressions(parseExpressions('property(car(BMW(X5)))')), 'property(car(BMW(X5)))');
  assert.deepEqual(parseExpressions('   '), []);
  assert.deepEqual(one('a.b(x)'), { domain: 'a', name: 'b', args: [{ name: 'x', args: [] }] });
  assert.deepEqual(one('decimal(3.14)').args[0], { name: '3.14', args: [] });
  assert.equal(formatExpressions(parseExpressions('empty()')), 'empty');
});

test('malformed text is a syntax error', () => {
  for (const text of ['greeting(hello', 'a,,b', 'a(b))', '(x)'])
    assert.throws(() => parseExpressions(text), ExpressionSyntaxError, text);
});

test('matching: names, arity, nesting, wildcards, numbers', () => {
  assert.equal(matches(one('greeting(*)'), one('greeting(hello)')), true);
  assert.equal(matches(one('greeting'), one('greeting(hello)')), false, 'arity differs');
  assert.equal(matches(one('greeting(hello)'), one('greeting(hi)')), false);
  assert.equal(matches(one('*'), one('property(car(BMW))')), true);
  assert.equal(matches(one('property(car(*))'), one('property(car(BMW(X5)))')), true);
  assert.equal(matches(one('property(*(BMW))'), one('property(car(BMW))')), true);
  assert.equal(matches(one('property(*(BMW))'), one('property(car(Audi))')), false);
  assert.equal(matches(one('integer(42)'), one('integer(42.0)')), true);
  assert.equal(matches(one('a.b(x)'), one('b(x)')), false, 'domains differ');
});

test('contiguous ordered sub-lists', () => {
  const list = parseExpressions('greeting(hello), unknown(x), goodbye(bye)');
  assert.equal(containsSequence(list, parseExpressions('greeting(*)')), true);
  assert.equal(containsSequence(list, parseExpressions('unknown(*), goodbye(*)')), true);
  assert.equal(containsSequence(list, parseExpressions('greeting(*), goodbye(*)')), false, 'not contiguous');
  assert.equal(containsSequence(list, parseExpressions('goodbye(*), unknown(*)')), false, 'not in order');
  assert.equal(containsSequence([], parseExpressions('greeting(*)')), false);
});
