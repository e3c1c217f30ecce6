import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matches, parseExpressions } from '../../expressions/expressions.ts';
import { builtInDictionary, quickReplyExpression } from './dictionaries.ts';
import { basicDictionary, builtIn, compileTask, DICTIONARY_URI, parse, regular } from '../../../test/support/parser.ts';

const only = async (name: string) => compileTask({ dictionaries: [builtIn(name)] });

test('integer: tokens made only of digits', async () => {
  const task = await only('integer');
  assert.equal(
    await parse(task, '42 007 4.2 -3 4a'),
    'integer(42), integer(007), unknown(4.2), unknown(-3), unknown(4a)',
  );
});

test('decimal: digits with one . or , inside; the comma becomes a dot', async () => {
  const task = await only('decimal');
  assert.equal(
    await parse(task, '3.14 3,5 42 3. .5 1.2.3'),
    'decimal(3.14), decimal(3.5), unknown(42), unknown(3.), unknown(.5), unknown(1.2.3)',
  );
});

test('punctuation: exactly one of ! ? . , : ;', async () => {
  const task = await only('punctuation');
  assert.equal(
    await parse(task, '! ? . , : ; !! -'),
    'punctuation(exclamation_mark), punctuation(question_mark), punctuation(dot), punctuation(comma), punctuation(colon), punctuation(semicolon), unknown(!!), unknown(-)',
  );
});

test('email: an address of the usual form', async () => {
  const task = await only('email');
  assert.equal(await parse(task, 'John.Doe+x@Example.co.uk'), 'email(John.Doe+x@Example.co.uk)');
  assert.equal(
    await parse(task, 'john@ john@example john@example.museum example.com'),
    'unknown(john@), unknown(john@example), unknown(john@example.museum), unknown(example.com)',
  );
});

test('time: H:MM, HH:MM, HH:MM:SS, 12h10, 15h; 24:00 is midnight; epoch ms of that time on 1970-01-01 (local)', async () => {
  const task = await only('time');
  const at = (h: number, m = 0, s = 0) => `time(${new Date(1970, 0, 1, h, m, s).getTime()})`;
  assert.equal(
    await parse(task, '9:05 12:30 23:59:58 12h10 15h 24:00'),
    [at(9, 5), at(12, 30), at(23, 59, 58), at(12, 10), at(15), at(0)].join(', '),
  );
  assert.equal(
    await parse(task, '25:00 12:60 24:01 1230 h12 12:3'),
    'unknown(25:00), unknown(12:60), unknown(24:01), unknown(1230), unknown(h12), unknown(12:3)',
  );
  const [parsed] = parseExpressions((await parse(task, '7:45'))!);
  assert.ok(matches(parseExpressions('time(*)')[0]!, parsed!), 'rules match it with time(*)');
});

test('ordinalNumber: 1st 2nd 3rd 4th ... and up to two digits followed by a dot', async () => {
  const task = await only('ordinalNumber');
  assert.equal(
    await parse(task, '1st 2ND 3rd 11th 3. 21. 05.'),
    'ordinal_number(1), ordinal_number(2), ordinal_number(3), ordinal_number(11), ordinal_number(3), ordinal_number(21), ordinal_number(5)',
  );
  assert.equal(
    await parse(task, 'first 123. 1s th .3'),
    'unknown(first), unknown(123.), unknown(1s), unknown(th), unknown(.3)',
  );
});

test('with decimal and ordinalNumber, 5. is an ordinal', async () => {
  const task = await compileTask({ dictionaries: [builtIn('decimal'), builtIn('ordinalNumber')] });
  assert.equal(await parse(task, '5. 5.5'), 'ordinal_number(5), decimal(5.5)');
});

test('integer, punctuation and time are consulted when the token is known; decimal, email and ordinalNumber are not', () => {
  const flags = Object.fromEntries(
    ['integer', 'decimal', 'punctuation', 'email', 'time', 'ordinalNumber'].map((name) => [
      name,
      builtInDictionary(`dictionaries.${name}`)!.lookupIfKnown,
    ]),
  );
  assert.deepEqual(flags, {
    integer: true,
    decimal: false,
    punctuation: true,
    email: false,
    time: true,
    ordinalNumber: false,
  });
});

test('a token that is only a phrase member gets the meaning of a built-in that is consulted when known', async () => {
  const dictionary = {
    phrases: [
      { phrase: 'room 1', expressions: 'room(one)' },
      { phrase: 'version 3.5', expressions: 'version(three_five)' },
    ],
  };
  const dictionaries = { [DICTIONARY_URI]: dictionary };
  const task = await compileTask(
    { dictionaries: [regular(), builtIn('integer'), builtIn('decimal')] },
    {},
    dictionaries,
  );
  assert.equal(
    await parse(task, 'take 1'),
    'unknown(take), integer(1)',
    'integer is consulted although 1 is known as a member',
  );
  assert.equal(
    await parse(task, 'take 3.5'),
    'unknown(take), unused(3.5)',
    'decimal is not consulted: 3.5 is already known',
  );
  assert.equal(await parse(task, 'room 1'), 'room(one)');
  const after = await compileTask({ dictionaries: [builtIn('decimal'), regular()] }, {}, dictionaries);
  assert.equal(
    await parse(after, 'take 3.5'),
    'unknown(take), decimal(3.5)',
    'listed first, decimal sees the token while it is unknown',
  );
});

test('the configured order decides which dictionary answers first', async () => {
  const other = { words: [{ word: 'hello', expressions: 'salutation(hello)' }] };
  const dictionaries = { [DICTIONARY_URI]: basicDictionary, 'svc://other': other };
  const task = await compileTask({ dictionaries: [regular('svc://other'), regular()] }, {}, dictionaries);
  assert.equal(await parse(task, 'hello bye'), 'salutation(hello), goodbye(bye)');
});

test('quick-reply expressions from values', () => {
  assert.equal(quickReplyExpression('Option 1'), 'option_1');
  assert.equal(quickReplyExpression('  Yes,  please! '), 'yes_please');
  assert.equal(quickReplyExpression('Später'), 'später');
});
