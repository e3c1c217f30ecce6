import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SubExtension } from './config.ts';
import { compileNormalizer, normalize } from './normalizers.ts';

const run = (name: string, input: string, config: Record<string, unknown> = {}) => {
  const extension: SubExtension = { type: name, kind: `normalizers.${name}`, config, where: name };
  return normalize(input, [compileNormalizer(extension)]);
};

test('always: trim and collapse whitespace; never lower-case', () => {
  assert.equal(normalize('  Hello \t  World \n ', []), 'Hello World');
});

test('punctuation: spaced out, or removed; times, ordinals, decimals and e-mail addresses stay whole', () => {
  assert.equal(run('punctuation', 'Hello, World! How are you?'), 'Hello , World ! How are you ?');
  assert.equal(run('punctuation', 'Hello, World!', { removePunctuation: true }), 'Hello World');
  assert.equal(
    run('punctuation', 'at 12:30, on the 3. day, 3,5 kg, mail me@example.com!'),
    'at 12:30 , on the 3. day , 3,5 kg , mail me@example.com !',
  );
  assert.equal(run('punctuation', 'wait...now'), 'wait . . . now');
  assert.equal(run('punctuation', 'a-b!c', { punctuationRegexPattern: '-' }), 'a - b!c');
  assert.equal(run('punctuation', 'a]b^c', { punctuationRegexPattern: ']^' }), 'a ] b ^ c');
});

test('specialCharacter: quotes, umlauts, accents', () => {
  assert.equal(
    run('specialCharacter', 'Grüße aus Österreich, café “crème” don’t'),
    'Gruesse aus Oesterreich, cafe "creme" don\'t',
  );
  assert.equal(run('specialCharacter', 'Gru\u0308ße'), 'Gruesse', 'decomposed umlauts too');
});

test('contractedWords: whole words, any case, typographic apostrophes', () => {
  assert.equal(run('contractedWords', "I'm sure you CAN'T, it’s don'tcha"), "i am sure you cannot, it is don'tcha");
});

test('allowedCharacter: letters, digits, whitespace and the allowed punctuation stay', () => {
  assert.equal(run('allowedCharacter', 'Héllo #wörld! (100%) ok?'), 'Héllo wörld! 100 ok?');
  assert.equal(run('allowedCharacter', 'a@b.c #x', { allowedCharacters: '@.' }), 'a@b.c x');
});
