import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, isRecord } from './json.ts';

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
});

describe('isRecord', () => {
  it('accepts plain objects only', () => {
    assert.equal(isRecord({}), true);
    assert.equal(isRecord(Object.create(null)), true);
    for (const value of [null, undefined, [], 'x', 1, true]) assert.equal(isRecord(value), false, String(value));
  });
});
