import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonSyntaxIssue, lineOfPath, parsePath, problemIssue } from './json-locate.ts';

const text = JSON.stringify(
  {
    behaviorGroups: [
      {
        name: 'g',
        behaviorRules: [
          { name: 'a', actions: ['x'] },
          { name: 'b', bogus: 1 },
        ],
      },
    ],
  },
  null,
  2,
);

describe('problem path -> line', () => {
  it('parses JSON paths', () => {
    assert.deepEqual(parsePath('$.a[0].b'), ['a', 0, 'b']);
    assert.deepEqual(parsePath("$['odd key'][2]"), ['odd key', 2]);
    assert.deepEqual(parsePath('$'), []);
  });

  it('finds the line of an unknown field', () => {
    const line = text.split('\n').findIndex((l) => l.includes('"bogus"')) + 1;
    assert.equal(lineOfPath(text, '$.behaviorGroups[0].behaviorRules[1].bogus')?.line, line);
  });

  it('finds array elements and falls back to the deepest existing part', () => {
    const lines = text.split('\n');
    const nameB = lines.findIndex((l) => l.includes('"b"')) + 1;
    assert.equal(lineOfPath(text, '$.behaviorGroups[0].behaviorRules[1].name')?.line, nameB);
    // A missing field: the object holding it.
    const ruleB = lineOfPath(text, '$.behaviorGroups[0].behaviorRules[1]')!.line;
    assert.equal(lineOfPath(text, '$.behaviorGroups[0].behaviorRules[1].conditions')?.line, ruleB);
    assert.equal(lineOfPath(text, '$.nothing.here')?.line, 1);
  });

  it('maps a problem to an issue', () => {
    const issue = problemIssue(text, { detail: 'Unknown field', path: '$.behaviorGroups[0].behaviorRules[1].bogus' });
    assert.equal(issue.message, 'Unknown field');
    assert.ok(issue.line > 1);
    assert.equal(problemIssue(text, { title: 'Bad Request' }).line, 1);
  });
});

describe('JSON syntax errors', () => {
  it('accepts valid JSON', () => {
    assert.equal(jsonSyntaxIssue(text), undefined);
    assert.equal(jsonSyntaxIssue('[1, 2.5e3, "a\\n", true, null, {}]'), undefined);
  });

  it('reports the line of a missing comma', () => {
    const issue = jsonSyntaxIssue('{\n  "a": 1\n  "b": 2\n}');
    assert.equal(issue?.line, 3);
    assert.match(issue!.message, /Expected ','/);
  });

  it('reports comments, trailing commas and unterminated strings', () => {
    assert.equal(jsonSyntaxIssue('{\n  // no\n  "a": 1\n}')?.line, 2);
    assert.match(jsonSyntaxIssue('{"a": [1, 2, ]}')!.message, /Trailing comma/);
    assert.equal(jsonSyntaxIssue('{\n"a": "open\n}')?.line, 2);
    assert.match(jsonSyntaxIssue('')!.message, /end of text/);
    assert.match(jsonSyntaxIssue('{} x')!.message, /after the end/);
  });
});
