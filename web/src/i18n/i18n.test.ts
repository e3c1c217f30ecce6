import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { en } from './en.ts';
import { plural, t } from './index.ts';

describe('manager texts', () => {
  it('fills parameters and leaves unknown ones visible', () => {
    assert.equal(t('id.copy', { what: 'agent id' }), 'Copy the agent id');
    assert.equal(t('id.copy'), 'Copy the {what}');
    assert.equal(t('id.copy', { what: undefined }), 'Copy the ');
  });
  it('chooses the plural form by count', () => {
    assert.equal(plural(1, 'count.steps.one', 'count.steps.other'), '1 step');
    assert.equal(plural(3, 'count.steps.one', 'count.steps.other'), '3 steps');
  });
  it('has no empty message', () => {
    for (const [key, text] of Object.entries(en)) assert.ok(text.trim() !== '', key);
  });
});
