import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareField, isSubset } from './compare.ts';

describe('transcript field comparisons', () => {
  it('exact compares JSON values and shows lists line by line', () => {
    assert.deepEqual(compareField({ value: ['a', 'b'] }, ['a', 'b']), { passed: true });
    const verdict = compareField({ value: ['a', 'b'], compare: 'exact' }, ['a', 'c', 'd']);
    assert.equal(verdict.passed, false);
    assert.equal(verdict.diff, '  [0] "a"\n- [1] "b"\n+ [1] "c"\n+ [2] "d"');
    assert.equal(compareField({ value: 1 }, 2).diff, '- 1\n+ 2');
  });

  it('ignore always passes', () => {
    assert.equal(compareField({ compare: 'ignore' }, 'anything').passed, true);
  });

  it('regex finds the pattern in the text (a list of texts joined by new lines)', () => {
    assert.equal(compareField({ value: '^It is \\d+ degrees', compare: 'regex' }, ['It is 21 degrees']).passed, true);
    assert.equal(compareField({ value: '^b$', compare: 'regex' }, ['a', 'b']).passed, false);
    assert.match(compareField({ value: 'x', compare: 'regex' }, ['a']).diff ?? '', /expected to match \/x\//);
  });

  it('contains looks for a text in a text, or for every expected element in a list', () => {
    assert.equal(compareField({ value: 'sunny', compare: 'contains' }, ['Paris is sunny.']).passed, true);
    assert.equal(compareField({ value: ['greet'], compare: 'contains' }, ['greet', 'lookup']).passed, true);
    assert.equal(compareField({ value: ['bye'], compare: 'contains' }, ['greet']).passed, false);
  });

  it('tolerance compares numbers within the allowed difference', () => {
    assert.equal(compareField({ value: 21, compare: 'tolerance', tolerance: 0.5 }, 21.4).passed, true);
    assert.equal(compareField({ value: 21, compare: 'tolerance', tolerance: 0.5 }, ['21.4']).passed, true);
    assert.equal(compareField({ value: 21, compare: 'tolerance', tolerance: 0.5 }, 22).passed, false);
    assert.equal(compareField({ value: 21, compare: 'tolerance', tolerance: 0.5 }, 'warm').passed, false);
  });

  it('subset finds every expected field and element in the actual JSON', () => {
    assert.equal(isSubset({ a: { b: 1 } }, { a: { b: 1, c: 2 }, d: 3 }), true);
    assert.equal(isSubset([{ value: 'Hi' }], [{ value: 'Yes' }, { value: 'Hi', expressions: 'x' }]), true);
    assert.equal(isSubset({ a: 1 }, { a: 2 }), false);
    assert.equal(isSubset({ toString: 1 }, {}), false);
    assert.equal(compareField({ value: { a: 1 }, compare: 'subset' }, { a: 1, b: 2 }).passed, true);
  });
});
