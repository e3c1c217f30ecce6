import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculate, CalculatorError, formatNumber } from './calculator.ts';

describe('calculator', () => {
  it('follows precedence, associativity and parentheses', () => {
    assert.equal(calculate('1 + 2 * 3'), 7);
    assert.equal(calculate('(1 + 2) * 3'), 9);
    assert.equal(calculate('2 ^ 3 ^ 2'), 512);
    assert.equal(calculate('-2 ^ 2'), -4);
    assert.equal(calculate('10 - 4 - 3'), 3);
    assert.equal(calculate('7 % 4'), 3);
    assert.equal(calculate('2 ** 10'), 1024);
    assert.equal(calculate('1.5e3 / 3'), 500);
  });

  it('knows functions and constants', () => {
    assert.equal(calculate('sqrt(16) + abs(-2)'), 6);
    assert.equal(calculate('max(1, 5, 3) * min(2, 4)'), 10);
    assert.equal(calculate('log(1000)'), 3);
    assert.equal(formatNumber(calculate('log(8, 2)')), '3');
    assert.equal(calculate('round(pi * 100)'), 314);
    assert.equal(formatNumber(calculate('0.1 + 0.2')), '0.3');
  });

  it('refuses anything that is not arithmetic', () => {
    for (const bad of [
      '',
      'process.exit()',
      '1 +',
      '(1',
      '2 / 0',
      'foo(1)',
      '1 2',
      'constructor',
      '"a"',
      'sqrt(1, 2)',
    ]) {
      assert.throws(() => calculate(bad), CalculatorError, bad);
    }
    assert.throws(() => calculate(`${'('.repeat(200)}1${')'.repeat(200)}`), /deeply/);
  });
});
