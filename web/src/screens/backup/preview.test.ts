import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ignoredEntries, previewRows } from './preview.ts';

it('reads import preview rows: the agent first, then its resources', () => {
  const answer = {
    strategy: 'merge',
    agent: { originId: 'a1', kind: 'agent', name: 'Greeter', action: 'UPDATE', targetId: 'x', targetVersion: 2 },
    resources: [{ originId: 'd1', kind: 'regulardictionary', name: 'Words', action: 'SKIP' }],
    ignoredEntries: ['notes.txt'],
  };
  assert.deepEqual(previewRows(answer), [
    { label: 'agent: Greeter', action: 'UPDATE', originId: 'a1', target: 'x v2' },
    { label: 'regulardictionary: Words', action: 'SKIP', originId: 'd1' },
  ]);
  assert.deepEqual(ignoredEntries(answer), ['notes.txt']);
  assert.equal(previewRows([{ kind: 'output', action: 'create' }])[0]!.action, 'CREATE');
  assert.deepEqual(previewRows(null), []);
});
