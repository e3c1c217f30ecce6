import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatExpressions } from '../../expressions/expressions.ts';
import type { SubExtension } from './config.ts';
import {
  compileCorrection,
  damerauLevenshtein,
  damerauLevenshteinBitParallel,
  snowballAlgorithm,
} from './corrections.ts';
import { compileDictionary, type Alternative } from './dictionaries.ts';
import { compileTask, correction, DICTIONARY_URI, parse, regular } from '../../../test/support/parser.ts';

const words = (...entries: Array<[word: string, expressions: string]>) => ({
  words: entries.map(([word, expressions]) => ({ word, expressions })),
});
const withCorrections = (dictionary: object, ...corrections: object[]) =>
  compileTask({ dictionaries: [regular()], corrections }, {}, { [DICTIONARY_URI]: dictionary });

/** Runs one correction directly and returns every candidate it offers, as text. */
function candidates(kind: string, config: Record<string, unknown>, dictionary: object, token: string): string[] {
  const compiled = compileDictionary(dictionary, 'svc://test');
  const extension: SubExtension = { type: kind, kind: `corrections.${kind}`, config, where: kind };
  const found: Alternative[] = [];
  compileCorrection(extension, [compiled]).correct(token, token.toLowerCase(), [compiled], undefined, found);
  return found.map((entry) => formatExpressions(entry.expressions));
}

test('Damerau-Levenshtein distance: an adjacent transposition counts as 1', () => {
  assert.equal(damerauLevenshtein('hello', 'hello'), 0);
  assert.equal(damerauLevenshtein('hlelo', 'hello'), 1);
  assert.equal(damerauLevenshtein('helo', 'hello'), 1);
  assert.equal(damerauLevenshtein('hallo!', 'hello'), 2);
  assert.equal(damerauLevenshtein('kitten', 'sitting'), 3);
  assert.equal(damerauLevenshtein('ca', 'abc'), 3, 'optimal string alignment');
  assert.ok(damerauLevenshtein('abcdef', 'uvwxyz', 2) > 2, 'gives up past the bound');
  assert.equal(damerauLevenshtein('', 'abc'), 3);
});

test('levenshtein: within the distance, transpositions count once; distance 1 vs 2', async () => {
  const dictionary = words(['hello', 'greeting(hello)'], ['weather', 'weather(now)']);
  const one = await withCorrections(dictionary, correction('levenshtein', { distance: 1 }));
  const two = await withCorrections(dictionary, correction('levenshtein'));
  assert.equal(await parse(one, 'hlelo'), 'greeting(hello)', 'transposition = 1');
  assert.equal(await parse(one, 'Helo'), 'greeting(hello)');
  assert.equal(await parse(one, 'hallo!'), 'unknown(hallo!)', 'distance 2 is too far for 1');
  assert.equal(await parse(two, 'hallo!'), 'greeting(hello)', 'default distance 2');
  assert.equal(await parse(two, 'wether'), 'weather(now)');
  assert.equal(await parse(two, 'hxlxx'), 'unknown(hxlxx)', 'distance 3');
  assert.equal(await parse(two, 'helloooo'), 'unknown(helloooo)', 'length outside ±distance');
});

test('levenshtein: candidates best first, at most maxCandidates; short tokens are not replaced wholesale', async () => {
  const dictionary = words(
    ['cart', 'shop(cart)'],
    ['cat', 'animal(cat)'],
    ['car', 'vehicle(car)'],
    ['hi', 'greeting(hi)'],
  );
  assert.deepEqual(candidates('levenshtein', {}, dictionary, 'cars'), ['vehicle(car)', 'shop(cart)', 'animal(cat)']);
  assert.deepEqual(candidates('levenshtein', { maxCandidates: 2 }, dictionary, 'cars'), ['vehicle(car)', 'shop(cart)']);
  const task = await withCorrections(dictionary, correction('levenshtein'));
  assert.equal(
    await parse(task, 'ok 42'),
    'unknown(ok), unknown(42)',
    'two edits on a two-letter token would replace it entirely',
  );
  assert.equal(await parse(task, 'hii'), 'greeting(hi)');
});

test('levenshtein corrects phrase members too, so a mistyped phrase still forms', async () => {
  const task = await withCorrections(
    { phrases: [{ phrase: 'good afternoon', expressions: 'greeting(good_afternoon)' }] },
    correction('levenshtein'),
  );
  assert.equal(await parse(task, 'good afternon'), 'greeting(good_afternoon)');
});

test('corrections only run for unknown tokens unless lookupIfKnown', async () => {
  const dictionary = {
    words: [{ word: 'run', expressions: 'activity(run)' }],
    phrases: [{ phrase: 'running shoes', expressions: 'product(running_shoes)' }],
  };
  const plain = await withCorrections(dictionary, correction('stemming', { language: 'english' }));
  const eager = await withCorrections(dictionary, correction('stemming', { language: 'english', lookupIfKnown: true }));
  assert.equal(
    await parse(plain, 'running'),
    'product(running_shoes)',
    'known as a phrase member: not stemmed, forms a partial phrase',
  );
  assert.equal(await parse(eager, 'running'), 'activity(run)', 'lookupIfKnown: the stem gives the member a meaning');
  assert.equal(await parse(eager, 'running shoes'), 'product(running_shoes)');
});

test('mergedTerms: a glued token split into dictionary words only when they cover it entirely', async () => {
  const dictionary = words(
    ['hello', 'greeting(hello)'],
    ['bye', 'goodbye(bye)'],
    ['hell', 'place(hell)'],
    ['obye', 'nonsense(obye)'],
    ['good', 'quality(good)'],
  );
  const task = await withCorrections(dictionary, correction('mergedTerms'));
  assert.equal(await parse(task, 'hellobye'), 'greeting(hello), goodbye(bye)', 'longest prefix first');
  assert.equal(await parse(task, 'ByeGood'), 'goodbye(bye), quality(good)');
  assert.equal(await parse(task, 'hellobyex'), 'unknown(hellobyex)', 'partial cover: no correction');
  assert.equal(await parse(task, 'hellogoodx bye'), 'unknown(hellogoodx), goodbye(bye)');
  const backtracking = await withCorrections(
    words(['ab', 'x(ab)'], ['abc', 'x(abc)'], ['cd', 'x(cd)']),
    correction('mergedTerms'),
  );
  assert.equal(await parse(backtracking, 'abcd'), 'x(ab), x(cd)', 'a dead end after the longest prefix backtracks');
  const turn = await withCorrections(dictionary, correction('mergedTerms'));
  assert.equal(await parse(turn, 'hello'), 'greeting(hello)', 'a known word is not split');
});

test('phonetic: words sounding alike (Refined Soundex, Double Metaphone); all colliding words are kept', async () => {
  const dictionary = words(
    ['night', 'time(night)'],
    ['knight', 'person(knight)'],
    ['day', 'time(day)'],
    ['smith', 'name(smith)'],
  );
  const task = await withCorrections(dictionary, correction('phonetic'));
  assert.equal(await parse(task, 'nite smyth'), 'time(night), name(smith)');
  assert.equal(await parse(task, 'morning'), 'unknown(morning)');
  assert.deepEqual(candidates('phonetic', {}, dictionary, 'nite'), ['time(night)', 'person(knight)']);
  assert.deepEqual(candidates('phonetic', {}, dictionary, 'dei'), ['time(day)']);
  assert.deepEqual(candidates('phonetic', {}, dictionary, '42'), []);
});

test('stemming: English and German, Snowball names and ISO codes', async () => {
  const english = words(['run', 'activity(run)'], ['house', 'building(house)']);
  for (const language of ['english', 'en', 'English', 'en-GB']) {
    const task = await withCorrections(english, correction('stemming', { language }));
    assert.equal(
      await parse(task, 'running runs houses ran'),
      'activity(run), activity(run), building(house), unknown(ran)',
      language,
    );
  }
  const german = words(['Haus', 'gebaeude(haus)'], ['laufen', 'aktivitaet(laufen)']);
  for (const language of ['german', 'de']) {
    const task = await withCorrections(german, correction('stemming', { language }));
    assert.equal(
      await parse(task, 'Häuser Hause laufe Katze'),
      'gebaeude(haus), gebaeude(haus), aktivitaet(laufen), unknown(Katze)',
      language,
    );
  }
  assert.equal(snowballAlgorithm('nb'), 'norwegian');
  assert.equal(snowballAlgorithm('porter'), 'porter');
  assert.equal(snowballAlgorithm('xx'), undefined);
});

test('corrections run in the configured order; the first correction that finds something wins', async () => {
  const dictionary = words(['night', 'time(night)'], ['nice', 'quality(nice)']);
  const phoneticFirst = await withCorrections(dictionary, correction('phonetic'), correction('levenshtein'));
  const levenshteinFirst = await withCorrections(dictionary, correction('levenshtein'), correction('phonetic'));
  assert.equal(await parse(phoneticFirst, 'nite'), 'time(night)');
  assert.equal(await parse(levenshteinFirst, 'nite'), 'quality(nice)', 'nice is one edit away, night two');
});

test('levenshtein and mergedTerms also use the quick-reply dictionary', async () => {
  const task = await withCorrections(
    words(['bye', 'goodbye(bye)']),
    correction('levenshtein'),
    correction('mergedTerms'),
  );
  const quickReplies = [
    { value: 'Continue', expressions: 'quickReply(continue)' },
    { value: 'yes', expressions: '' },
  ];
  assert.equal(await parse(task, 'contniue', { quickReplies }), 'quickReply(continue)');
  assert.equal(await parse(task, 'yesbye', { quickReplies }), 'yes, goodbye(bye)');
});

test('the bit-parallel distance equals the reference dynamic programme', () => {
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const word = (length: number) => Array.from({ length }, () => 'abcde'[Math.floor(random() * 5)]).join('');
  for (let round = 0; round < 3000; round++) {
    const a = word(1 + Math.floor(random() * 12));
    const b = random() < 0.1 ? '' : word(Math.floor(random() * 12));
    assert.equal(damerauLevenshteinBitParallel(a, b), damerauLevenshtein(a, b), `${a} / ${b}`);
  }
  const long = 'x'.repeat(40);
  assert.equal(damerauLevenshteinBitParallel(long, `${long}yz`), 2, 'long patterns fall back to the programme');
  const edge = `${'ab'.repeat(15)}c`;
  assert.equal(
    damerauLevenshteinBitParallel(edge, `${'ba'.repeat(15)}c`),
    damerauLevenshtein(edge, `${'ba'.repeat(15)}c`),
    '31 units',
  );
  assert.equal(damerauLevenshteinBitParallel(edge, 'x'), 31);
});
