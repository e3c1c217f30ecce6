import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeploymentError } from '../../runtime/tasks.ts';
import {
  basicDictionary,
  builtIn,
  compileTask,
  correction,
  DICTIONARY_URI,
  makeTurn,
  normalizer,
  parse,
  regular,
} from '../../../test/support/parser.ts';

test('the worked examples of reference §3.6 and Appendix C.1', async () => {
  const task = await compileTask({
    dictionaries: [regular(), builtIn('integer')],
    corrections: [correction('levenshtein', { distance: 2 })],
  });
  const cases: Array<[input: string, parsed: string, intents: string[]]> = [
    ['hello', 'greeting(hello)', ['greeting']],
    ['Hello', 'greeting(hello)', ['greeting']],
    ['hi', 'greeting(hi)', ['greeting']],
    ['good afternoon', 'greeting(good_afternoon)', ['greeting']],
    ['hello Vienna', 'greeting(hello), unknown(Vienna)', ['greeting', 'unknown']],
    ['hello!', 'greeting(hello)', ['greeting']],
    ['42', 'integer(42)', ['integer']],
    ['property', 'property(someMeaning(someValue))', ['property']],
    ['see you', 'goodbye(see_you)', ['goodbye']],
  ];
  for (const [input, parsed, intents] of cases) {
    const turn = makeTurn(input);
    await task.execute(turn);
    assert.equal(turn.get('expressions:parsed'), parsed, input);
    assert.deepEqual(turn.get('intents'), intents, input);
    assert.equal(turn.output.expressions, parsed, input);
    assert.deepEqual(turn.output.intents, intents, input);
    assert.equal(turn.get('input:normalized'), input);
    assert.equal(turn.output.input, input);
  }
});

test('without a correction, hello! stays unknown (no punctuation normaliser)', async () => {
  const task = await compileTask({ dictionaries: [regular()] });
  assert.equal(await parse(task, 'hello!'), 'unknown(hello!)');
});

test('step data: intents are public, the rest is not; matches are debug lines without unused/unknown', async () => {
  const task = await compileTask({ dictionaries: [regular()], corrections: [correction('levenshtein')] });
  const turn = makeTurn('hello  good afternoon   Vienna helo');
  await task.execute(turn);
  assert.equal(turn.get('input:normalized'), 'hello good afternoon Vienna helo');
  assert.equal(
    turn.output.input,
    'hello good afternoon Vienna helo',
    'the output input is overwritten with the normalised input',
  );
  assert.equal(
    turn.get('expressions:parsed'),
    'greeting(hello), greeting(good_afternoon), unknown(Vienna), greeting(hello)',
  );
  assert.deepEqual(turn.get('expressions:matches'), [
    '"hello" → greeting(hello)',
    '"good afternoon" → greeting(good_afternoon) [phrase]',
    '"helo" → greeting(hello) [levenshtein]',
  ]);
  const { step } = turn.finish();
  const visibility = Object.fromEntries(step.entries.map((entry) => [entry.key, entry.public]));
  assert.deepEqual(visibility, {
    'input:normalized': false,
    'expressions:parsed': false,
    intents: true,
    'expressions:matches': false,
  });
});

test('a partial phrase: typing only members of a longer phrase, contiguously, yields the phrase', async () => {
  const dictionary = {
    words: [{ word: 'hello', expressions: 'greeting(hello)' }],
    phrases: [
      { phrase: 'good afternoon', expressions: 'greeting(good_afternoon)' },
      { phrase: 'day after tomorrow', expressions: 'date(day_after_tomorrow)' },
      { phrase: 'hello Vienna', expressions: 'greeting(vienna)' },
    ],
  };
  const task = await compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: dictionary });
  assert.equal(await parse(task, 'good'), 'greeting(good_afternoon)');
  assert.equal(await parse(task, 'after tomorrow'), 'date(day_after_tomorrow)');
  assert.equal(await parse(task, 'day after tomorrow'), 'date(day_after_tomorrow)');
  assert.equal(
    await parse(task, 'hello Vienna'),
    'greeting(vienna)',
    'a full phrase wins over the words it is made of',
  );
  assert.equal(
    await parse(task, 'hello'),
    'greeting(hello)',
    'a word with a meaning of its own is not turned into a partial phrase',
  );
  assert.equal(
    await parse(task, 'tomorrow after'),
    'unused(tomorrow), unused(after)',
    'members out of order form no phrase',
  );
});

test('non-contiguous phrase members form no phrase', async () => {
  const dictionary = { phrases: [{ phrase: 'day after tomorrow', expressions: 'date(day_after_tomorrow)' }] };
  const task = await compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: dictionary });
  assert.equal(
    await parse(task, 'day someword after tomorrow'),
    'unused(day), unknown(someword), unused(after), unused(tomorrow)',
  );
});

test('phrases: longest first, every occurrence, case-insensitive, members in the middle of other words', async () => {
  const dictionary = {
    words: [{ word: 'new', expressions: 'adjective(new)' }],
    phrases: [
      { phrase: 'new york', expressions: 'city(new_york)' },
      { phrase: 'new york city', expressions: 'city(nyc)' },
    ],
  };
  const task = await compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: dictionary });
  assert.equal(await parse(task, 'New York City and new York'), 'city(nyc), unknown(and), city(new_york)');
  assert.equal(
    await parse(task, 'new car'),
    'adjective(new), unknown(car)',
    'a member that is also a word keeps its meaning when no phrase forms',
  );
});

test("quick replies of the previous step are a temporary dictionary, consulted before the agent's dictionaries", async () => {
  const dictionary = {
    words: [
      { word: 'yes', expressions: 'confirmation(yes)' },
      { word: 'maybe', expressions: 'doubt(maybe)' },
    ],
  };
  const task = await compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: dictionary });
  const quickReplies = [
    { value: 'Option 1', expressions: 'quickReply(option1)' },
    { value: 'Option 2', expressions: '' },
    { value: 'Yes', expressions: 'quickReply(yes)' },
    { value: 'Später!' },
  ];
  assert.equal(await parse(task, 'Option 1', { quickReplies }), 'quickReply(option1)');
  assert.equal(
    await parse(task, 'option 2', { quickReplies }),
    'option_2',
    'blank expressions: the value lower-cased, _ for spaces',
  );
  assert.equal(
    await parse(task, 'yes', { quickReplies }),
    'quickReply(yes)',
    'the quick reply comes before the dictionary',
  );
  assert.equal(await parse(task, 'Später!', { quickReplies }), 'später');
  assert.equal(await parse(task, 'maybe', { quickReplies }), 'doubt(maybe)');
  assert.equal(await parse(task, 'yes'), 'confirmation(yes)', 'without quick replies the dictionary answers');
});

test('quick replies: malformed ones are ignored', async () => {
  const task = await compileTask({ dictionaries: [regular()] });
  const quickReplies = [
    null,
    { value: 42 },
    { value: 'Broken', expressions: 'a(' },
    { value: '!!!' },
    { value: 'Fine' },
  ];
  assert.equal(await parse(task, 'Broken Fine', { quickReplies }), 'unknown(Broken), fine');
});

test('language gate: a dictionary with a language is consulted only when lang equals it exactly', async () => {
  const german = { language: 'de', words: [{ word: 'hallo', expressions: 'greeting(hallo)' }] };
  const neutral = { words: [{ word: 'ok', expressions: 'confirmation(ok)' }] };
  const dictionaries = { 'svc://de': german, 'svc://any': neutral };
  const task = await compileTask(
    {
      dictionaries: [regular('svc://de'), regular('svc://any')],
      corrections: [correction('levenshtein', { distance: 1 })],
    },
    {},
    dictionaries,
  );
  assert.equal(await parse(task, 'hallo ok', { lang: 'de' }), 'greeting(hallo), confirmation(ok)');
  assert.equal(await parse(task, 'hallo ok', { lang: 'en' }), 'unknown(hallo), confirmation(ok)');
  assert.equal(
    await parse(task, 'hallo ok', { lang: 'DE' }),
    'unknown(hallo), confirmation(ok)',
    'the comparison is exact',
  );
  assert.equal(await parse(task, 'hallo ok'), 'unknown(hallo), confirmation(ok)', 'no lang property: English');
  assert.equal(
    await parse(task, 'halo', { lang: 'de' }),
    'greeting(hallo)',
    'corrections use the dictionary when its language is on',
  );
  assert.equal(await parse(task, 'halo', { lang: 'en' }), 'unknown(halo)', 'corrections respect the gate');
});

test('without a lang property the conversation is English: "language": "en" dictionaries match (as upstream)', async () => {
  const english = { language: 'en', words: [{ word: 'hello', expressions: 'greeting(hello)' }] };
  const german = { language: 'de', words: [{ word: 'servus', expressions: 'greeting(servus)' }] };
  const task = await compileTask(
    { dictionaries: [regular('svc://en'), regular('svc://de')], corrections: [correction('levenshtein')] },
    {},
    { 'svc://en': english, 'svc://de': german },
  );
  assert.equal(await parse(task, 'hello servus'), 'greeting(hello), unknown(servus)');
  assert.equal(await parse(task, 'helo'), 'greeting(hello)', 'corrections use the English dictionary too');
  assert.equal(await parse(task, 'hello servus', { lang: 'de' }), 'unknown(hello), greeting(servus)');
  assert.equal(await parse(task, 'hello', { lang: '' }), 'greeting(hello)', 'an empty lang is no language');
});

test('appendExpressions (default true) merges distinct with what an earlier parser stored in the step', async () => {
  const first = await compileTask({ dictionaries: [regular()] });
  const second = await compileTask(
    { dictionaries: [regular('svc://other')] },
    {},
    {
      'svc://other': {
        words: [
          { word: 'hello', expressions: 'greeting(hello)' },
          { word: 'vienna', expressions: 'city(vienna)' },
        ],
      },
    },
  );
  const turn = makeTurn('hello Vienna');
  await first.execute(turn);
  await second.execute(turn);
  assert.equal(turn.get('expressions:parsed'), 'greeting(hello), unknown(Vienna), city(vienna)');
  assert.deepEqual(turn.get('intents'), ['greeting', 'unknown', 'city']);
  assert.deepEqual(turn.output.intents, ['greeting', 'unknown', 'city']);
  assert.equal(turn.output.expressions, 'greeting(hello), unknown(Vienna), city(vienna)');
  assert.deepEqual(turn.get('expressions:matches'), [
    '"hello" → greeting(hello)',
    '"hello" → greeting(hello)',
    '"Vienna" → city(vienna)',
  ]);

  const replacing = await compileTask(
    { dictionaries: [regular('svc://other')] },
    { appendExpressions: false },
    {
      'svc://other': { words: [{ word: 'vienna', expressions: 'city(vienna)' }] },
    },
  );
  const again = makeTurn('hello Vienna');
  await first.execute(again);
  await replacing.execute(again);
  assert.equal(again.get('expressions:parsed'), 'unknown(hello), city(vienna)');
  assert.deepEqual(again.get('intents'), ['unknown', 'city']);
  assert.deepEqual(again.output.intents, ['greeting', 'unknown', 'city'], 'the output list is appended per workflow');
});

test('includeUnknown=false and includeUnused=false filter; an empty solution stores nothing', async () => {
  const dictionary = { ...basicDictionary, words: [...basicDictionary.words, { word: 'the' }] };
  const task = await compileTask(
    { dictionaries: [regular()] },
    { includeUnknown: false, includeUnused: false },
    { [DICTIONARY_URI]: dictionary },
  );
  assert.equal(await parse(task, 'hello the Vienna'), 'greeting(hello)');
  const turn = makeTurn('Vienna the');
  await task.execute(turn);
  assert.equal(turn.has('expressions:parsed'), false);
  assert.equal(turn.has('intents'), false);
  assert.equal(turn.output.expressions, undefined);
  assert.equal(turn.output.intents, undefined);
  assert.equal(turn.get('input:normalized'), 'Vienna the', 'the normalised input is still recorded');

  const keeping = await compileTask(
    { dictionaries: [regular()] },
    { includeUnknown: true, includeUnused: true },
    { [DICTIONARY_URI]: dictionary },
  );
  assert.equal(await parse(keeping, 'hello the Vienna'), 'greeting(hello), unused(the), unknown(Vienna)');
});

test('maxInputTokens: tokens past the limit are dropped', async () => {
  const task = await compileTask({ dictionaries: [regular()] }, { maxInputTokens: 2 });
  const turn = makeTurn('hello bye question');
  await task.execute(turn);
  assert.equal(turn.get('expressions:parsed'), 'greeting(hello), goodbye(bye)');
  assert.equal(turn.get('input:normalized'), 'hello bye question');
  const many = await compileTask({ dictionaries: [regular()] });
  assert.equal((await parse(many, Array(250).fill('hi').join(' ')))?.split(', ').length, 200, 'default 200');
});

test('blank input (conversation start) does nothing', async () => {
  const task = await compileTask({ dictionaries: [regular()] });
  for (const input of ['', '   ']) {
    const turn = makeTurn(input);
    await task.execute(turn);
    assert.equal(turn.finish().step.entries.length, 0);
    assert.equal(turn.output.input, input);
  }
});

test('normalisers run in order before tokenising; no lower-casing', async () => {
  const task = await compileTask(
    {
      normalizer: [normalizer('specialCharacter'), normalizer('contractedWords'), normalizer('punctuation')],
      dictionaries: [regular('svc://words'), builtIn('punctuation'), builtIn('time')],
    },
    {},
    {
      'svc://words': {
        words: [
          { word: 'hello', expressions: 'greeting(hello)' },
          { word: 'not', expressions: 'negation(not)' },
          { word: 'gruesse', expressions: 'greeting(gruesse)' },
        ],
      },
    },
  );
  const turn = makeTurn('  Hello!  don’t  Grüße at 12:30. ');
  await task.execute(turn);
  assert.equal(turn.get('input:normalized'), 'Hello ! do not Gruesse at 12:30 .');
  assert.equal(
    turn.get('expressions:parsed'),
    `greeting(hello), punctuation(exclamation_mark), unknown(do), negation(not), greeting(gruesse), unknown(at), time(${new Date(1970, 0, 1, 12, 30).getTime()}), punctuation(dot)`,
  );
});

test('a regular dictionary: later duplicate words win, entries without expressions are unused, regexes match whole tokens', async () => {
  const dictionary = {
    words: [
      { word: 'Hello', expressions: 'greeting(first)' },
      { word: 'hello', expressions: 'greeting(second)' },
      { word: 'um' },
    ],
    phrases: [{ phrase: 'kind regards' }],
    regExs: [{ regEx: '[A-Z]{2}\\d{4}', expressions: 'flight(number)' }, { regEx: 'x+' }],
  };
  const task = await compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: dictionary });
  assert.equal(await parse(task, 'HELLO um'), 'greeting(second), unused(um)');
  assert.equal(await parse(task, 'kind regards'), 'unused(kind regards)');
  assert.equal(await parse(task, 'OS1234 xOS1234 xxx'), 'flight(number), unknown(xOS1234), unused(xxx)');
  const turn = makeTurn('OS1234');
  await task.execute(turn);
  assert.deepEqual(turn.get('expressions:matches'), ['"OS1234" → flight(number) [regex]']);
});

test('configuration errors fail the deployment with a DeploymentError naming the problem', async () => {
  const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp]> = [
    [{ dictionaries: [builtIn('roman')] }, {}, /unknown dictionary type 'svc:\/\/ai.svc.parser.dictionaries.roman'/],
    [{ corrections: [correction('soundalike')] }, {}, /unknown correction type/],
    [{ normalizer: [normalizer('lowercase')] }, {}, /unknown normalizer type/],
    [{ corrections: [correction('stemming', { language: 'klingon' })] }, {}, /unknown stemming language 'klingon'/],
    [{ corrections: [correction('stemming')] }, {}, /'language' is required/],
    [
      { corrections: [correction('levenshtein', { distance: 0 })] },
      {},
      /\$\.extensions\.corrections\[0\]\.config\.distance/,
    ],
    [
      { corrections: [correction('levenshtein', { distance: 'far' })] },
      {},
      /\$\.extensions\.corrections\[0\]\.config\.distance/,
    ],
    [
      { corrections: [correction('phonetic', { lookupIfKnown: 'sometimes' })] },
      {},
      /\$\.extensions\.corrections\[0\]\.config\.lookupIfKnown/,
    ],
    [{ dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: {} }] }, {}, /'config.uri'/],
    [{ dictionaries: 'all' }, {}, /\$\.extensions\.dictionaries.*must be array/],
    [{}, { maxInputTokens: 0 }, /\$\.config\.maxInputTokens/],
    [{}, { appendExpressions: 'yes' }, /\$\.config\.appendExpressions/],
    [{}, { surprise: 1 }, /Unknown field 'surprise' at \$\.config\.surprise/],
  ];
  for (const [extensions, config, message] of cases) {
    await assert.rejects(
      compileTask(extensions, config),
      (error: unknown) => error instanceof DeploymentError && message.test(error.message),
    );
  }
  const broken = { words: [{ word: 'hello', expressions: 'greeting(hello' }] };
  await assert.rejects(
    compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: broken }),
    (error: unknown) =>
      error instanceof DeploymentError && error.message.includes(DICTIONARY_URI) && error.message.includes("'hello'"),
  );
  await assert.rejects(
    compileTask({ dictionaries: [regular()] }, {}, { [DICTIONARY_URI]: { regExs: [{ regEx: '(' }] } }),
    (error: unknown) => error instanceof DeploymentError && /does not compile/.test(error.message),
  );
});

test('upstream spellings of the sub-extension types are accepted', async () => {
  const task = await compileTask(
    {
      dictionaries: [{ type: 'eddi://ai.labs.parser.dictionaries.regular', config: { uri: DICTIONARY_URI } }],
      corrections: [{ type: 'eddi://ai.labs.parser.corrections.levenshtein', config: { distance: 1 } }],
    },
    { maxInputTokens: 10, appendExpressions: false },
  );
  assert.equal(await parse(task, 'helo'), 'greeting(hello)');
});

test('a 10,000-word dictionary: known words and typos are found (performance measured separately, no timing asserted)', async () => {
  const words = Array.from({ length: 10_000 }, (_, index) => ({
    word: `w${index.toString(36)}x${(index * 7919).toString(36)}`,
    expressions: `term(t${index})`,
  }));
  const dictionary = {
    words,
    phrases: Array.from({ length: 500 }, (_, index) => ({
      phrase: `${words[index]!.word} ${words[index + 1]!.word}`,
      expressions: `pair(p${index})`,
    })),
  };
  const task = await compileTask(
    {
      dictionaries: [regular()],
      corrections: [
        correction('levenshtein'),
        correction('mergedTerms'),
        correction('phonetic'),
        correction('stemming', { language: 'en' }),
      ],
    },
    {},
    { [DICTIONARY_URI]: dictionary },
  );
  const picks = [9999, 17, 4242, 777, 8080, 1234, 5678, 3141, 2718, 6000];
  const input = picks.map((index) => words[index]!.word.toUpperCase()).join(' ');
  assert.equal(await parse(task, input), picks.map((index) => `term(t${index})`).join(', '));
  assert.equal(await parse(task, `${words[0]!.word} ${words[1]!.word}`), 'pair(p0)');
  const typo = words[4242]!.word.slice(0, -1);
  assert.match((await parse(task, typo))!, /^term\(t\d+\)$/);
});

test('unknown words with parentheses or commas still give expressions that parse again', async () => {
  const { parseExpressions } = await import('../../expressions/expressions.ts');
  const { compileParser } = await import('./parser-task.ts');
  const { parser } = await compileParser({}, {}, async () => ({ words: [] }));
  const matches = parser.parse('hello (there), ( x', undefined);
  const text = matches
    .flatMap((match) => match.expressions)
    .map((e) => `${e.name}(${e.args.map((a) => a.name).join(', ')})`)
    .join(', ');
  assert.equal(text, 'unknown(hello), unknown(there), unknown(_), unknown(x)');
  assert.doesNotThrow(() => parseExpressions(text));
});
