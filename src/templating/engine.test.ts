import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clearTemplateCache,
  compileTemplate,
  MAX_ITERATIONS,
  MAX_OUTPUT_LENGTH,
  needsRendering,
  renderTemplate,
  TemplateError,
  TemplateLimitError,
  TemplateSyntaxError,
  templateEngineStats,
} from './engine.ts';
import { testTurn } from '../../test/support/turns.ts';
import { templateData } from './data-model.ts';

const data = {
  properties: {
    name: 'anna',
    city: 'Vienna',
    count: 3,
    countText: '3',
    zero: 0,
    price: 12.5,
    big: 10.0,
    yes: true,
    no: false,
    empty: '',
    nothing: null,
    padded: '  hi  ',
    list: ['a', 'b', 'c'],
    emptyList: [],
    nested: [
      [1, 2],
      ['x', null],
    ],
    profile: { name: 'Anna', age: 30, tags: ['x'] },
    emptyMap: {},
    json: '{"a":{"b":[1,2]}}',
    uri: 'svc://ai.svc.agent/agentstore/agents/0123456789abcdef01234567?version=4',
    people: [
      { name: 'Ann', age: 30 },
      { name: 'Bob', age: 17 },
    ],
    size: 'own size',
  },
  memory: { current: { input: 'Vienna', actions: ['greet', 'ask'] }, last: {} },
  conversationInfo: { agentId: 'agent-1' },
};

const render = (template: string) => renderTemplate(template, data);

function assertRenders(cases: ReadonlyArray<readonly [template: string, expected: string]>): void {
  for (const [template, expected] of cases) assert.equal(render(template), expected, template);
}

function assertSyntaxError(template: string, pattern: RegExp, line?: number, column?: number): void {
  assert.throws(
    () => render(template),
    (error: unknown) => {
      assert.ok(error instanceof TemplateSyntaxError, `${template}: ${String(error)}`);
      assert.ok(error instanceof TemplateError);
      assert.match(error.message, pattern, template);
      assert.match(error.message, /at line \d+, column \d+$/, template);
      if (line !== undefined) assert.equal(error.position.line, line, `${template}: line`);
      if (column !== undefined) assert.equal(error.position.column, column, `${template}: column`);
      return true;
    },
  );
}

// --- fast path --------------------------------------------------------------------------------------------------

test('needsRendering: only { + letter, #, /, !, | or the [[${ form', () => {
  for (const yes of ['{a}', 'x {properties.name}', '{#if a}{/if}', '{/if}', '{! c !}', '{| raw |}', '[[${a}]]', '{é}'])
    assert.equal(needsRendering(yes), true, yes);
  for (const no of ['', 'plain', '{"a":1}', '{ x }', '{}', '{1}', '{$x}', '{_x}', '[[ x ]]', '[${a}]', '{-}'])
    assert.equal(needsRendering(no), false, no);
});

test('${…} placeholders (vault, caller) are never template tags', () => {
  assert.equal(needsRendering('${vault:apiKey}'), false);
  assert.equal(needsRendering('Bearer ${caller:token}'), false);
  assert.equal(render('Bearer ${vault:apiKey} for {properties.name}'), 'Bearer ${vault:apiKey} for anna');
  assert.equal(render('${caller:userId}/{caller:token}'), '${caller:userId}/${caller:token}');
});

test('strings that need no rendering pass through unchanged, even malformed-looking ones', () => {
  for (const text of [
    '{"a":1}',
    '{ x }',
    '{"nested": {"b": [1, {"c": 2}]}}',
    'no braces',
    '{',
    '}',
    '${caller:token}',
    "{''.constructor}",
  ]) {
    assert.equal(render(text), text);
  }
});

test('JSON with template tags inside keeps its JSON braces', () => {
  assert.equal(render('{"city": "{properties.city}", "n": {properties.count}}'), '{"city": "Vienna", "n": 3}');
  assert.equal(render('{ "a": [[${properties.city}]] }'), '{ "a": Vienna }');
});

// --- values -----------------------------------------------------------------------------------------------------

test('values render as text: strings verbatim, numbers, booleans, lists in Java form, objects as JSON', () => {
  assertRenders([
    ['Hi {properties.name}!', 'Hi anna!'],
    ['{properties.count}', '3'],
    ['{properties.price}', '12.5'],
    ['{properties.big}', '10'],
    ['{properties.zero}', '0'],
    ['{properties.yes}/{properties.no}', 'true/false'],
    ['{properties.list}', '[a, b, c]'],
    ['{properties.emptyList}', '[]'],
    ['{properties.nested}', '[[1, 2], [x, null]]'],
    ['{memory.current.actions}', '[greet, ask]'],
    ['{properties.profile}', '{"name":"Anna","age":30,"tags":["x"]}'],
    ['{properties.emptyMap}', '{}'],
    ['<b>{properties.json}</b>', '<b>{"a":{"b":[1,2]}}</b>'],
  ]);
});

test('missing values and null render as empty text, never NOT_FOUND', () => {
  assertRenders([
    ['Hi {properties.missing}!', 'Hi !'],
    ['{properties.nothing}', ''],
    ['{nope.deeper.still}', ''],
    ['{properties.list[9]}', ''],
    ['{properties.missing.toUpperCase}', ''],
    ['{properties.missing.size()}', ''],
    ['[[${properties.missing}]]', ''],
  ]);
});

test("dot paths with [i] and ['key'] indexes, numeric segments and loops over them", () => {
  assertRenders([
    ['{properties.list[1]}', 'b'],
    ['{properties.list.0}', 'a'],
    ['{properties.nested[0][1]}', '2'],
    ["{properties['city']}", 'Vienna'],
    ['{properties.people[1].name}', 'Bob'],
    ['{properties.profile.tags[0]}', 'x'],
    ['{memory.current.input}', 'Vienna'],
    ['{conversationInfo.agentId}', 'agent-1'],
  ]);
  assert.equal(renderTemplate('{user-name}', { 'user-name': 'dash' }), 'dash');
});

// --- [[${…}]] ------------------------------------------------------------------------------------------------------

test('the older [[${expr}]] form renders with the same expressions', () => {
  assertRenders([
    ['[[${properties.city}]]', 'Vienna'],
    ['q=[[${memory.current.input}]]&x=1', 'q=Vienna&x=1'],
    ['[[${properties.name.toUpperCase()}]] and {properties.name}', 'ANNA and anna'],
    ["[[${properties.city.replace('n', '}')}]]", 'Vie}}a'],
  ]);
  assertSyntaxError('[[${properties.city}', /unclosed '\[\[\$\{'/);
  assertSyntaxError('[[${properties.city}]', /unclosed '\[\[\$\{'/);
  assertSyntaxError('[[${properties..city}]]', /expected a name after '\.'/);
});

// --- sections -----------------------------------------------------------------------------------------------------

test('{#if}: true and false branches, {#else if}, {#else}', () => {
  assertRenders([
    ['{#if properties.yes}Y{/if}', 'Y'],
    ['{#if properties.no}Y{/if}', ''],
    ['{#if properties.no}Y{#else}N{/if}', 'N'],
    ['{#if properties.yes}Y{#else}N{/if}', 'Y'],
    ['{#if properties.count == 1}one{#else if properties.count == 3}three{#else}other{/if}', 'three'],
    ['{#if properties.count == 1}one{#else if properties.count == 2}two{#else}other{/if}', 'other'],
    ['{#if properties.count == 1}one{#else if properties.count == 2}two{/if}', ''],
    ['{#if properties.missing}Y{#else}N{/}', 'N'],
  ]);
});

test('{#if} truthiness: null, false, 0, empty text, empty list and map are false', () => {
  for (const falsy of ['missing', 'nothing', 'no', 'zero', 'empty', 'emptyList', 'emptyMap'])
    assert.equal(render(`{#if properties.${falsy}}T{#else}F{/if}`), 'F', falsy);
  for (const truthy of ['name', 'count', 'yes', 'list', 'profile', 'padded'])
    assert.equal(render(`{#if properties.${truthy}}T{#else}F{/if}`), 'T', truthy);
});

test('{#if} operators: comparisons, logic, negation, parentheses, literals, word operators', () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ['properties.count == 3', true],
    ['properties.count == properties.countText', true],
    ["properties.countText == '3'", true],
    ['properties.count != 3', false],
    ['properties.count > 2', true],
    ['properties.count >= 3', true],
    ['properties.count < 3', false],
    ['properties.count <= 2', false],
    ['properties.price > 12.25', true],
    ['properties.count > -1', true],
    ["properties.name == 'anna'", true],
    ['properties.name == "anna"', true],
    ["properties.name != 'anna'", false],
    ["properties.name < 'bob'", true],
    ['properties.name > 3', false],
    ['properties.nothing == null', true],
    ['properties.missing == null', true],
    ['properties.name == null', false],
    ['properties.yes == true', true],
    ['properties.no == false', true],
    ['properties.yes && properties.no', false],
    ['properties.yes || properties.no', true],
    ['!properties.no', true],
    ['!properties.yes', false],
    ['!(properties.yes && properties.no)', true],
    ['(properties.count > 5 || properties.yes) && properties.name', true],
    ['properties.count gt 2 and properties.name eq "anna"', true],
    ['properties.count lt 2 or properties.name ne "anna"', false],
    ['properties.list.size() == 3', true],
    ["properties.list.contains('b')", true],
    ["properties.name.startsWith('an')", true],
    ['true', true],
    ['false', false],
    ['null', false],
    ['0', false],
    ['1', true],
    ["''", false],
    ["'x'", true],
  ];
  for (const [condition, expected] of cases)
    assert.equal(render(`{#if ${condition}}T{#else}F{/if}`), expected ? 'T' : 'F', condition);
});

test('{#for}: items, iteration metadata, nested loops, {#else} and empty lists', () => {
  assertRenders([
    ['{#for x in properties.list}{x}{/for}', 'abc'],
    ['{#for x in properties.list}{x_index}{x_count}{/for}', '011223'],
    ['{#for x in properties.list}{x}{#if x_hasNext}, {/if}{/for}', 'a, b, c'],
    ['{#for x in properties.list}{#if x_isFirst}[{/if}{x}{#if x_isLast}]{/if}{/for}', '[abc]'],
    ['{#for x in properties.list}{x_odd}/{x_even} {/for}', 'true/false false/true true/false '],
    ['{#for x in properties.list}{x_indexParity} {/for}', 'odd even odd '],
    ['{#for p in properties.people}{p.name} ({p.age}){#if p_hasNext}; {/if}{/for}', 'Ann (30); Bob (17)'],
    ['{#for p in properties.people}{#if p.age >= 18}{p.name}{/if}{/for}', 'Ann'],
    [
      '{#for row in properties.nested}{#for cell in row}{row_index}.{cell_index}={cell} {/for}{/for}',
      '0.0=1 0.1=2 1.0=x 1.1= ',
    ],
    ['{#for x in properties.emptyList}{x}{/for}', ''],
    ['{#for x in properties.emptyList}{x}{#else}none{/for}', 'none'],
    ['{#for x in properties.missing}{x}{#else}none{/for}', 'none'],
    ['{#for x in properties.list}{x}{#else}none{/for}', 'abc'],
    ['{#for i in 3}{i}{/for}', '123'],
    ['{#for e in properties.profile}{e.key}={e.value};{/for}', 'name=Anna;age=30;tags=[x];'],
    ['{#for x in properties.list}{x}{/}', 'abc'],
    ['{#for x in properties.list}{properties.city}{/for}', 'ViennaViennaVienna'],
  ]);
  assert.equal(render('{#for x in properties.list}{x}{/for}{x}'), 'abc', 'the loop variable ends with the loop');
});

test('{#each}: the item is `it`', () => {
  assertRenders([
    ['{#each properties.list}{it}{/each}', 'abc'],
    ['{#each properties.list}{it_count}:{it}{#if it_hasNext},{/if}{/each}', '1:a,2:b,3:c'],
    ['{#each properties.people}{it.name}{/each}', 'AnnBob'],
    ['{#each properties.emptyList}{it}{#else}-{/each}', '-'],
    ['{#each properties.list}{it}{/for}', 'abc'],
  ]);
});

test('nested sections', () => {
  const template =
    '{#for p in properties.people}{#if p.age > 18}{#if p_isFirst}first adult {p.name}{#else}adult{/if}{#else}minor {p.name.toUpperCase}{/if}|{/for}';
  assert.equal(render(template), 'first adult Ann|minor BOB|');
  assert.equal(
    render('{#if properties.yes}{#if properties.no}a{#else}{#for x in properties.list}{x}{/for}{/if}{/if}'),
    'abc',
  );
});

test('{! comments !}, {| raw text |} and \\{ escapes', () => {
  assertRenders([
    ['a{! a comment with {properties.name} and } inside !}b', 'ab'],
    ['{!\nmulti\nline\n!}x', 'x'],
    ['{| {properties.name} stays |}', ' {properties.name} stays '],
    ['\\{properties.name} is {properties.name}', '{properties.name} is anna'],
    ['a \\ b {properties.name}', 'a \\ b anna'],
  ]);
});

// --- methods ----------------------------------------------------------------------------------------------------

test('string methods, with or without ()', () => {
  assertRenders([
    ['{properties.name.toUpperCase}', 'ANNA'],
    ['{properties.name.toUpperCase()}', 'ANNA'],
    ['{properties.profile.name.toLowerCase}', 'anna'],
    ["{properties.name.replace('n', 'N')}", 'aNNa'],
    ["{properties.name.replace('', '-')}", '-a-n-n-a-'],
    ["{properties.name.replace('n', '$&')}", 'a$&$&a'],
    ["{properties.name.contains('nn')}", 'true'],
    ["{properties.name.contains('x')}", 'false'],
    ["{properties.name.indexOf('n')} {properties.name.lastIndexOf('n')} {properties.name.indexOf('z')}", '1 2 -1'],
    [
      "{properties.name.startsWith('an')} {properties.name.endsWith('na')} {properties.name.endsWith('x')}",
      'true true false',
    ],
    ['{properties.name.substring(2)}', 'na'],
    ['{properties.name.substring(1, 3)}', 'nn'],
    ['{properties.name.substringRange(0, 2)}', 'an'],
    ['{properties.name.substring(9)}', ''],
    ['[{properties.padded.trim}] [{properties.padded.strip()}]', '[hi] [hi]'],
    ['{properties.name.length} {properties.name.length()} {properties.name.size}', '4 4 4'],
    ['{properties.name.isEmpty} {properties.empty.isEmpty()}', 'false true'],
    ['{properties.name.charAt(0)}{properties.name.charAt(99)}', 'a'],
    ["{properties.name.concat('!')} {properties.name.concat(properties.city)}", 'anna! annaVienna'],
    ["{properties.name.concat('-').toUpperCase().replace('A', 'a')}", 'aNNa-'],
    ['{properties.name.replace}', ''],
    ['{properties.name.substring}', ''],
    ['{properties.name.noSuchMethod()}', ''],
    ['{properties.count.toUpperCase}', ''],
  ]);
});

test('.size() / .size / .length on lists, maps and strings; list and map helpers; defaults', () => {
  assertRenders([
    ['{properties.list.size()} {properties.list.size} {properties.list.length}', '3 3 3'],
    ['{properties.profile.size()} {properties.profile.length} {properties.emptyMap.size}', '3 3 0'],
    ['{properties.city.size()}', '6'],
    ['{properties.emptyList.isEmpty} {properties.list.isEmpty()}', 'true false'],
    ['{properties.list.get(2)} {properties.list.first} {properties.list.last}', 'c a c'],
    [
      "{properties.profile.get('name')} {properties.profile.containsKey('age')} {properties.profile.keys}",
      'Anna true [name, age, tags]',
    ],
    ['{properties}', JSON.stringify(data.properties)],
    ["{properties.missing.or('dflt')} {properties.name.or('dflt')}", 'dflt anna'],
    ["{properties.missing ?: 'dflt'} {properties.nothing ?: properties.city}", 'dflt Vienna'],
    ["{properties.yes ? 'on' : 'off'} {properties.no ? 'on' : 'off'}", 'on off'],
  ]);
  assert.equal(
    renderTemplate('{map.size} {map.size()}', { map: { size: 'own' } }),
    'own 1',
    'own data first, the method when called',
  );
});

// --- helpers ----------------------------------------------------------------------------------------------------

test('arithmetic: + - * / on numbers (also numeric strings), * and / before + and -, unary minus, parentheses', () => {
  const cases: Array<[string, string]> = [
    ['{properties.count + 1}', '4'],
    ['{properties.countText + 1}', '4'],
    ['{properties.count - 5}', '-2'],
    ['{properties.price * 2}', '25'],
    ['{properties.big / 4}', '2.5'],
    ['{properties.zero + 1 + 2 * 3}', '7'],
    ['{properties.zero + (1 + 2) * 3}', '9'],
    ['{properties.big - 4 - 3}', '3'],
    ['{properties.big / 5 / 2}', '1'],
    ['{properties.zero + -properties.count + 1}', '-2'],
    ['{#if -properties.count < 0}negative{/if}', 'negative'],
    ['{properties.count * -3}', '-9'],
    ['{properties.name.length()-2}', '2'],
    ['{properties.name.substring(1, properties.name.length() - 1)}', 'nn'],
    ['{properties.list.size()-1}', '2'],
    ['{properties.count+1 > 3}', 'true'],
    ['{properties.count * 2 == 6}', 'true'],
    ['{properties.list.first() + properties.count}', 'a3'],
    ["{properties.name + '!'}", 'anna!'],
  ];
  for (const [template, expected] of cases) assert.equal(render(template), expected, template);
  // Division by zero, non-numbers and missing values are missing: they render as ''.
  for (const template of [
    '{properties.count / 0}',
    '{properties.count / properties.zero}',
    '{properties.name * 2}',
    '{properties.profile + 1}',
    '{properties.missing + 1}',
    '{properties.list - 1}',
    '{#if -properties.name}yes{/if}',
    '{properties.yes + 1}',
  ])
    assert.equal(render(template), '', template);
  assert.equal(render('{properties.count / 0 ?: 0}'), '0');
  assertSyntaxError('{properties.count +}', /missing operand after '\+'/);
  assertSyntaxError('{properties.count * * 2}', /unexpected '\*'/);
});

test('conversationLog: the past inputs and outputs as role/content messages, built only when generate() is called', () => {
  const step = (output: Record<string, unknown>) => ({ entries: [], output, timestamp: 0, properties: {} });
  const turn = testTurn({
    input: 'and now?',
    steps: [
      step({ output: ['Welcome!'] }),
      step({ input: 'hi', output: ['Hello', { type: 'text', text: 'there.' }, { type: 'image', uri: 'x' }] }),
    ],
  });
  turn.setOutput('input', 'and now?');
  const data = templateData(turn);
  assert.deepEqual(JSON.parse(renderTemplate('{json:serialize(conversationLog.generate().toObject())}', data)), [
    { role: 'assistant', content: 'Welcome!' },
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'Hello there.' },
    { role: 'user', content: 'and now?' },
  ]);
  assert.equal(
    renderTemplate('{conversationLog.generate()}', data),
    'assistant: Welcome!\nuser: hi\nassistant: Hello there.\nuser: and now?',
  );
  assert.equal(
    renderTemplate('{conversationLog.generate().toString()}', data),
    renderTemplate('{conversationLog.generate()}', data),
  );
  assert.equal(renderTemplate('{conversationLog.generate().toObject().size()}', data), '4');
  assert.equal(
    renderTemplate('{#for m in conversationLog.generate().toObject()}{m.role}={m.content};{/for}', data),
    'assistant=Welcome!;user=hi;assistant=Hello there.;user=and now?;',
  );
  assert.deepEqual(JSON.parse(renderTemplate('{json:serialize(conversationLog.generate())}', data)).messages.length, 4);
  // Nothing else is reachable on it, and nothing is computed until generate() is called.
  for (const template of [
    '{conversationLog.messages}',
    '{conversationLog.constructor}',
    '{conversationLog.generate().constructor}',
  ])
    assert.equal(renderTemplate(template, data), '', template);
  // A saved response or iteration object of that name wins over it.
  assert.equal(renderTemplate('{conversationLog.a}', templateData(turn, { conversationLog: { a: 'mine' } })), 'mine');
  let reads = 0;
  const watched = {
    get input() {
      reads++;
      return 'hi';
    },
  };
  const lazy = templateData(testTurn({ steps: [step(watched)] }));
  assert.equal(renderTemplate('{properties.x}{memory.current.input}{conversationLog.size()}', { ...lazy }), '');
  assert.equal(reads, 0, 'a turn whose templates do not generate the log does not read the steps for it');
  assert.equal(renderTemplate('{conversationLog.generate()}', lazy), 'user: hi');
  assert.ok(reads > 0);
});

test('uuidUtils helpers', () => {
  const uuid = render('{uuidUtils:generateUUID()}');
  assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(render('{uuidUtils:generateUUID}'), uuid);
  assert.equal(render('{uuidUtils:extractId(properties.uri)}'), '0123456789abcdef01234567');
  assert.equal(render('{uuidUtils:extractVersion(properties.uri)}'), '4');
  assert.equal(render("{uuidUtils:extractId('svc://x/y/abc')}"), 'abc');
  assert.equal(render("{uuidUtils:extractVersion('svc://x/y/abc')}"), '');
});

test('json helpers', () => {
  assertRenders([
    ['{json:serialize(properties.profile)}', '{"name":"Anna","age":30,"tags":["x"]}'],
    ['{json:serialize(properties.name)}', '"anna"'],
    ['{json:serialize(properties.missing)}', 'null'],
    ['{"q": {json:serialize(properties.json)}}', '{"q": "{\\"a\\":{\\"b\\":[1,2]}}"}'],
    ['{json:deserialize(properties.json).a.b[1]}', '2'],
    ['{json:deserialize(properties.json).a.b.size}', '2'],
    ["{json:deserialize('not json')}", ''],
    ['{json:deserialize(\'{"__proto__": {"x": 1}}\').x}', ''],
  ]);
});

test('encoder helpers (Java Base64 encoders)', () => {
  assertRenders([
    ["{encoder:base64('hello?>')}", 'aGVsbG8/Pg=='],
    ["{encoder:base64Url('hello?>')}", 'aGVsbG8_Pg=='],
    ['{encoder:base64(properties.city)}', 'Vmllbm5h'],
    ["{encoder:base64('ü')}", 'w7w='],
  ]);
  const long = 'x'.repeat(100);
  const mime = renderTemplate('{encoder:base64Mime(s)}', { s: long });
  const lines = mime.split('\r\n');
  assert.equal(lines[0]!.length, 76);
  assert.equal(lines.join(''), Buffer.from(long).toString('base64'));
});

test('{caller:…} renders back to the ${caller:…} placeholder', () => {
  assertRenders([
    ['Bearer {caller:token}', 'Bearer ${caller:token}'],
    ['{caller:userId}', '${caller:userId}'],
  ]);
});

test('unknown helpers and wrong arities are syntax errors', () => {
  assertSyntaxError('{vault:secret}', /unknown function 'vault:secret'/);
  assertSyntaxError('{json:nope(x)}', /unknown function 'json:nope'/);
  assertSyntaxError('{json:serialize()}', /takes 1 argument, not 0/);
  assertSyntaxError('{constructor:name}', /unknown function 'constructor:name'/);
  assertSyntaxError('{toString:call()}', /unknown function/);
});

// --- safety -----------------------------------------------------------------------------------------------------

test('SAFETY: no code execution, no prototype chain, only whitelisted methods', () => {
  const attacks = [
    "{constructor.constructor('return process')()}",
    "{constructor.constructor('return process')().exit()}",
    "{properties.constructor.constructor('return process')()}",
    "{properties.name.constructor.constructor('return process')()}",
    "{properties.list.constructor.constructor('return globalThis')()}",
    '{properties.__proto__}',
    '{properties.__proto__.toString}',
    '[[${__proto__}]]',
    '[[${__proto__.constructor}]]',
    '{toString}',
    '{toString()}',
    '{valueOf}',
    '{hasOwnProperty}',
    '{properties.toString()}',
    '{properties.name.valueOf()}',
    '{properties.name.__proto__}',
    '{properties.list.map}',
    "{properties.list.join(',')}",
    '{properties.list.__proto__.push}',
    '{properties.name.constructor}',
    "{properties['constructor']}",
    "{properties['__proto__']}",
    "{properties.list['length']}",
    '{properties.profile.hasOwnProperty("name")}',
    '{it_constructor}',
    "{#if ''.constructor}T{/if}",
    "[[${''.constructor.constructor('return 1')()}]]",
    '{#for x in properties.list}{x.constructor}{x_constructor}{x___proto__}{/for}',
    '{#each properties.list}{it.constructor.name}{/each}',
    '{properties.count.constructor}',
    '{json:deserialize(properties.json).constructor}',
    '{json:deserialize(properties.json).__proto__}',
  ];
  for (const attack of attacks) assert.equal(render(attack), '', attack);
  // Not tags at all (`{` + quote or underscore): they stay literal text, and are never evaluated.
  for (const literal of ["{''.constructor}", '{__proto__}', '{_x.constructor}']) assert.equal(render(literal), literal);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('SAFETY: functions found in data are never called', () => {
  let called = false;
  const trap = () => {
    called = true;
    return 'called';
  };
  assert.equal(renderTemplate('{f}{f()}{o.f}{o.f()}{#if f()}x{/if}', { f: trap, o: { f: trap } }), '');
  assert.equal(called, false);
});

test('SAFETY: the engine source never evaluates text as code', async () => {
  const { readFile } = await import('node:fs/promises');
  for (const file of ['engine.ts', 'parser.ts', 'evaluator.ts']) {
    const source = await readFile(new URL(file, import.meta.url), 'utf8');
    assert.doesNotMatch(source, /\beval\s*\(|new\s+Function|Function\s*\(|Reflect\.|\[name\]\s*\(/, file);
  }
});

test('SAFETY: loops are bounded: more than MAX_ITERATIONS iterations is a TemplateLimitError', () => {
  assert.equal(MAX_ITERATIONS, 10_000);
  assert.equal(renderTemplate('{#for i in n}.{/for}', { n: MAX_ITERATIONS }).length, MAX_ITERATIONS);
  assert.throws(() => renderTemplate('{#for i in n}.{/for}', { n: MAX_ITERATIONS + 1 }), TemplateLimitError);
  assert.throws(() => renderTemplate('{#for i in 1000000000000}{/for}', {}), TemplateLimitError);
  const list = Array.from({ length: 200 }, (_, i) => i);
  assert.throws(
    () => renderTemplate('{#for a in l}{#for b in l}{/for}{/for}', { l: list }),
    /more than 10000 loop iterations/,
    'nested loops share the budget',
  );
  assert.ok(new TemplateLimitError('x') instanceof TemplateError);
});

test('SAFETY: output and intermediate strings are bounded by MAX_OUTPUT_LENGTH', () => {
  assert.equal(MAX_OUTPUT_LENGTH, 1_000_000);
  const chunk = 'x'.repeat(200_000);
  assert.equal(renderTemplate('{#for i in 5}{s}{/for}', { s: chunk }).length, 1_000_000);
  assert.throws(() => renderTemplate('{#for i in 6}{s}{/for}', { s: chunk }), TemplateLimitError);
  assert.throws(() => renderTemplate("{s.replace('', s)}", { s: 'y'.repeat(2_000) }), TemplateLimitError);
  assert.throws(() => renderTemplate("{s.replace('x', s)}", { s: chunk }), TemplateLimitError);
  assert.throws(
    () => renderTemplate('{s.concat(s).concat(s).concat(s).concat(s).concat(s)}', { s: chunk }),
    TemplateLimitError,
  );
});

// --- syntax errors ----------------------------------------------------------------------------------------------

test('syntax errors name the problem and the position', () => {
  assertSyntaxError('Hello {#if properties.yes}open', /unclosed section '\{#if\}'/, 1, 7);
  assertSyntaxError('a\nbc {#for x in properties.list}{x}', /unclosed section '\{#for\}'/, 2, 4);
  assertSyntaxError('{#each l}x', /unclosed section '\{#each\}'/, 1, 1);
  assertSyntaxError('x{/if}', /closes no open section/, 1, 2);
  assertSyntaxError('{#if a}{/for}', /'\{\/for\}' does not match '\{#if\}' opened at line 1, column 1/, 1, 8);
  assertSyntaxError('{#for x in l}{/if}', /does not match '\{#for\}'/);
  assertSyntaxError('{#if a}{#else}{#else}{/if}', /a second '\{#else\}'/);
  assertSyntaxError('{#else}', /outside a section/);
  assertSyntaxError('{#for x in l}{#else if a}{/for}', /takes no arguments/);
  assertSyntaxError('{#if}x{/if}', /empty expression/, 1, 5);
  assertSyntaxError('{#for x l}{/for}', /expected '\{#for <name> in <expression>\}'/);
  assertSyntaxError('{#for x in}{/for}', /expected '\{#for <name> in <expression>\}'/);
  assertSyntaxError('{#switch a}{/switch}', /unknown section '\{#switch\}'/);
  assertSyntaxError('{name', /unclosed tag/, 1, 1);
  assertSyntaxError('{! never closed', /unclosed comment/);
  assertSyntaxError('{| never closed', /unclosed raw text/);
  assertSyntaxError('ab {a b}', /unexpected 'b' in expression/, 1, 7);
  assertSyntaxError('{a..b}', /expected a name after '\.'/);
  assertSyntaxError('{a.b(}', /missing operand/);
  assertSyntaxError('{a.b(1}', /expected '\)'/);
  assertSyntaxError("{a.replace('x}", /unclosed tag/);
  assertSyntaxError('{#if a ==}x{/if}', /missing operand after '=='/);
  assertSyntaxError('{#if (a}x{/if}', /expected '\)'/);
  assertSyntaxError('{a ? b}', /expected ':'/);
  assertSyntaxError('{a @ b}', /unexpected character '@'/, 1, 4);
  assertSyntaxError('{#if a && }x{/if}', /missing operand after '&&'/);
  assertSyntaxError('{#if a}'.repeat(100) + '{/if}'.repeat(100), /sections nested deeper than 64/, 1, 449);
  assertSyntaxError(`{a.or(${'('.repeat(10_000)}1${')'.repeat(10_000)})}`, /expression nested deeper than 64/);
  assertSyntaxError(`{#if ${'!'.repeat(10_000)}a}{/if}`, /expression nested deeper than 64/);
  assert.equal(render(`${'{#if a}'.repeat(60)}deep${'{/if}'.repeat(60)}`), '');
  assert.equal(render(`${'{#if properties.yes}'.repeat(60)}deep${'{/if}'.repeat(60)}`), 'deep');
});

// --- caching ----------------------------------------------------------------------------------------------------

test('templates are compiled once per distinct source; rendering a cached template does no parsing', () => {
  clearTemplateCache();
  const before = templateEngineStats().compilations;
  const template = '{#for x in properties.list}{x}{/for} {properties.name} {uuidUtils:generateUUID()}';
  for (let i = 0; i < 50; i++) render(template);
  assert.equal(templateEngineStats().compilations - before, 1);
  render('{properties.city}');
  assert.equal(templateEngineStats().compilations - before, 2);
  assert.equal(templateEngineStats().cached, 2);
  for (let i = 0; i < 5; i++) render('{"a":1} plain');
  assert.equal(templateEngineStats().compilations - before, 2, 'the fast path never compiles');
  for (let i = 0; i < 3; i++) assert.throws(() => render('{#if a}'), TemplateSyntaxError);
  assert.equal(templateEngineStats().compilations - before, 3, 'a syntax error is remembered too');
  const compiled = compileTemplate('{properties.city}!');
  assert.equal(compiled.render(data), 'Vienna!');
  assert.equal(compiled.render({ properties: { city: 'Graz' } }), 'Graz!');
});

test('the cache is bounded', () => {
  clearTemplateCache();
  for (let i = 0; i < 2_100; i++) renderTemplate(`{a}${i}`, { a: 'x' });
  assert.ok(templateEngineStats().cached <= 2_000);
  clearTemplateCache();
});
