import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
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
  it('holds only messages some screen asks for', () => {
    const src = fileURLToPath(new URL('..', import.meta.url));
    const code = (readdirSync(src, { recursive: true }) as string[])
      .filter((f) => /\.tsx?$/.test(f) && !f.startsWith('i18n') && !f.endsWith('.test.ts'))
      .map((f) => readFileSync(join(src, f), 'utf8'))
      .join('\n');
    const unused = Object.keys(en).filter((key) => !code.includes(`'${key}'`) && !code.includes(`"${key}"`));
    assert.deepEqual(unused, []);
  });
});
