import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedOf, rowsOf, withExpectations } from './expectations.ts';

describe('transcript editor rows', () => {
  it('round-trips expectations through editable rows', () => {
    const expected = {
      output: { value: ['Hello'], compare: 'exact' as const },
      actions: { value: '^greet', compare: 'regex' as const },
      properties: { temperature: { value: 21, compare: 'tolerance' as const, tolerance: 0.5 } },
    };
    const rows = rowsOf(expected);
    assert.deepEqual(
      rows.map((row) => [row.field, row.compare, row.value]),
      [
        ['output', 'exact', '["Hello"]'],
        ['quickReplies', '', ''],
        ['actions', 'regex', '^greet'],
        ['properties.temperature', 'tolerance', '21'],
      ],
    );
    assert.deepEqual(expectedOf(rows), expected);
  });

  it('names the field whose value is not JSON, and drops unchecked fields', () => {
    const rows = rowsOf({ output: { value: ['a'] } });
    rows[0]!.value = 'not json';
    assert.throws(() => expectedOf(rows), /output: the expected value is not valid JSON/);
    rows[0]!.compare = '';
    assert.deepEqual(expectedOf(rows), {});
  });

  it('puts the start step first and the turns after it', () => {
    const transcript = { start: {}, turns: [{ input: 'hi' }] };
    const edited = withExpectations(transcript, [rowsOf({ output: { value: ['Welcome'] } }), rowsOf(undefined)]);
    assert.deepEqual(edited, {
      start: { expected: { output: { value: ['Welcome'], compare: 'exact' } } },
      turns: [{ input: 'hi', expected: {} }],
    });
  });
});
