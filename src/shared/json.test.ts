import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, isRecord, JsonDepthScanner, nestsDeeperThan } from './json.ts';

describe('canonicalJson', () => {
  it('gives equal text for equal values whatever the order of their keys', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } }),
      '{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}',
    );
    assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  });

  it('leaves undefined members out and writes what JSON cannot hold as null', () => {
    assert.equal(canonicalJson({ a: undefined, b: [undefined, 1] }), '{"b":[null,1]}');
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson('é"\n'), '"é\\"\\n"');
  });

  it("writes the text of the value's JSON copy, whatever JSON makes of its parts", () => {
    const values: unknown[] = [
      {
        n: Number.NaN,
        i: Number.POSITIVE_INFINITY,
        z: -0,
        e: 1e21,
        small: 5e-7,
        f: () => 1,
        s: Symbol('s'),
        u: undefined,
      },
      // biome-ignore lint/suspicious/noSparseArray: an array with a hole
      [undefined, () => 1, Symbol('s'), Number.NaN, -0, , 1],
      { date: new Date(0), nested: { toJSON: (key: string) => `as ${key}` }, boxed: [new String('x'), new Number(2)] },
      { '2': 'b', '10': 'a', b: { é: 1, e: 2, '😀': 3, Z: 4 }, lone: '\ud800', quote: '"\\\n\u0001' },
      { map: new Map([[1, 2]]), set: new Set([1]), empty: {}, list: [] },
      'text',
      42,
      null,
    ];
    for (const value of values)
      assert.equal(canonicalJson(value), canonicalJson(JSON.parse(JSON.stringify(value))), JSON.stringify(value));
  });
});

describe('isRecord', () => {
  it('accepts plain objects only', () => {
    assert.equal(isRecord({}), true);
    assert.equal(isRecord(Object.create(null)), true);
    for (const value of [null, undefined, [], 'x', 1, true]) assert.equal(isRecord(value), false, String(value));
  });
});

describe('nestsDeeperThan', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  it('counts nested arrays and objects, not brackets inside strings', () => {
    assert.equal(nestsDeeperThan(bytes('{"a":[{"b":[]}]}'), 4), false);
    assert.equal(nestsDeeperThan(bytes('{"a":[{"b":[[]]}]}'), 4), true);
    assert.equal(nestsDeeperThan(bytes('[[],[],[[]]]'), 3), false);
    assert.equal(nestsDeeperThan(bytes('{"[[[[[":"{{{{\\"}'), 1), false);
    assert.equal(nestsDeeperThan(bytes('["\\"[[[[", "é[["]'), 1), false);
  });

  it('follows a document across chunks', () => {
    const scanner = new JsonDepthScanner(3);
    assert.equal(scanner.beyondLimit(bytes('{"x":"[[[\\')), false, 'an escape split across chunks');
    assert.equal(scanner.beyondLimit(bytes('"[[", "y": [')), false, 'still in the string, then depth 2');
    assert.equal(scanner.beyondLimit(bytes('[')), false);
    assert.equal(scanner.beyondLimit(bytes('[')), true);
  });
});
