import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderTemplate } from './engine.ts';
import { rawText } from './raw-text.ts';

test('rawText: the engine writes the text out as it is, whatever template syntax it holds', () => {
  for (const text of [
    'plain',
    '',
    '{properties.name} and {#if x}y{/if} and {! c !}',
    'ends a raw part |} early, opens {| one, and |}}',
    'a||} b |}|} c {||}',
    '[[${memory.current.input}]] \\{x} ${vault:key}',
    '{unclosed',
  ]) {
    assert.equal(renderTemplate(rawText(text), { properties: { name: 'N' }, x: true }), text);
  }
});
