import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffJson, maskSecrets } from '../cli/diff.ts';

/** The CLI's field-level diff and how it hides secret values (`cli/diff.ts`). */

describe('svc-agents field-level diff', () => {
  it('names each changed, added and removed field by its JSON path, in document order', () => {
    const before = { name: 'a', config: { list: [1, 2, 3], nested: { keep: true, old: 'x' }, same: [{ a: 1 }] } };
    const after = { name: 'b', config: { list: [1, 5], nested: { keep: true, added: 'y' }, same: [{ a: 1 }] } };
    assert.deepEqual(diffJson(before, after), [
      { path: '$.name', before: 'a', after: 'b' },
      { path: '$.config.list[1]', before: 2, after: 5 },
      { path: '$.config.list[2]', before: 3 },
      { path: '$.config.nested.old', before: 'x' },
      { path: '$.config.nested.added', after: 'y' },
    ]);
  });

  it('sees equal values written in another key order as equal, and a changed type as one change', () => {
    assert.deepEqual(diffJson({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }), []);
    assert.deepEqual(diffJson({ a: [1] }, { a: { 0: 1 } }), [{ path: '$.a', before: [1], after: { 0: 1 } }]);
  });

  it('hides values at a secret path, below it, and in a change that holds one', () => {
    const secrets = new Set(['$.config.tasks[0].parameters.apiKey']);
    const changes = maskSecrets(
      [
        { path: '$.config.tasks[0].parameters.apiKey', before: 'sk-1', after: 'sk-2' },
        { path: '$.config.tasks[0].parameters', after: { apiKey: 'sk-3' } },
        { path: '$.config.tasks[0].parameters.apiKeyName', before: 'x', after: 'y' },
        { path: '$.config.tasks[1].parameters.modelName', before: 'a', after: 'b' },
      ],
      secrets,
    );
    assert.deepEqual(changes, [
      { path: '$.config.tasks[0].parameters.apiKey', before: '(secret)', after: '(secret)' },
      { path: '$.config.tasks[0].parameters', after: '(secret)' },
      { path: '$.config.tasks[0].parameters.apiKeyName', before: 'x', after: 'y' },
      { path: '$.config.tasks[1].parameters.modelName', before: 'a', after: 'b' },
    ]);
  });
});
