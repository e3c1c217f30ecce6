import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExpressions } from '../../expressions/expressions.ts';
import type { ContextValue, Property, StoredStep } from '../../runtime/memory.ts';
import { DeploymentError, type CompiledTask } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { MAX_ITERATIONS } from '../../templating/engine.ts';
import { openVault, type Vault } from '../../security/vault.ts';
import { openSqliteStorage } from '../../storage/sqlite/sqlite-storage.ts';
import { propertyFromExpression, propertyTask, typedValue } from './property-task.ts';
import { compileStep } from '../../../test/support/tasks.ts';
import { testTurn } from '../../../test/support/turns.ts';

const SETTER_URI = 'svc://ai.svc.property/propertysetterstore/propertysetters/0123456789abcdef01234567?version=1';

async function compile(
  config: Record<string, unknown>,
  stored?: unknown,
  extensions: Record<string, unknown> = {},
): Promise<CompiledTask> {
  return compileStep(propertyTask, { config, extensions }, async (reference, kind) => {
    assert.equal(reference, SETTER_URI);
    assert.equal(kind, 'property');
    return stored;
  });
}

const onActions = (...entries: Array<[actions: string[] | string, setProperties: object[]]>) => ({
  setOnActions: entries.map(([actions, setProperties]) => ({ actions, setProperties })),
});

function storedStep(actions: string[]): StoredStep {
  return {
    entries: [{ key: 'actions', value: actions, timestamp: 0, public: true }],
    output: { actions },
    timestamp: 0,
    properties: {},
  };
}

interface TurnOptions {
  actions?: string[];
  input?: string;
  context?: Record<string, ContextValue>;
  properties?: Record<string, Property>;
  steps?: StoredStep[];
  expressions?: string;
  httpCalls?: Record<string, unknown>;
}

function turnWith(options: TurnOptions = {}): Turn {
  const turn = testTurn(options);
  if (options.input) turn.setOutput('input', options.input);
  if (options.expressions !== undefined) turn.set('expressions:parsed', options.expressions);
  if (options.httpCalls) turn.setOutput('httpCalls', options.httpCalls);
  turn.setActions(options.actions ?? []);
  return turn;
}

const prop = (name: string, value: unknown, scope: Property['scope'] = 'conversation'): Property => ({
  name,
  value,
  scope,
});
const values = (turn: Turn) => Object.fromEntries([...turn.properties].map(([name, p]) => [name, p.value]));

// --- expressions and context ------------------------------------------------------------------------------------

test('property(...) expressions set typed properties with their scope and are listed in properties:extracted', async () => {
  const task = await compile({});
  const turn = turnWith({
    expressions:
      'greeting(hello), property(someMeaning(someValue)), property(age(42)), property(price(3.5)), property(vip(true)), ' +
      'property(user(address(city(Vienna)))), property(home(Graz), longTerm), property(tmp(x), step), property(other(y), conversation), ' +
      'property(bare), property(two(a, b)), unknown(property)',
  });
  await task.execute(turn);
  const expected = [
    prop('someMeaning', 'someValue'),
    prop('age', 42),
    prop('price', 3.5),
    prop('vip', true),
    prop('user.address.city', 'Vienna'),
    prop('home', 'Graz', 'longTerm'),
    prop('tmp', 'x', 'step'),
    prop('other', 'y'),
  ];
  assert.deepEqual([...turn.properties.values()], expected);
  assert.deepEqual(turn.get('properties:extracted'), expected);
  assert.equal(turn.entriesWithPrefix('properties:extracted')[0]!.public, true);
  assert.deepEqual(turn.get('properties:someMeaning'), [prop('someMeaning', 'someValue')], 'mirrored into the step');
  assert.equal((turn.output.properties as Record<string, unknown>).age, 42);
});

test('typed values: integers, decimals, booleans, else text; integers beyond the safe range stay text', () => {
  assert.equal(typedValue('-7'), -7);
  assert.equal(typedValue('0.25'), 0.25);
  assert.equal(typedValue('FALSE'), false);
  assert.equal(typedValue('12345678901234567890'), '12345678901234567890');
  assert.equal(typedValue('1e3'), '1e3');
  assert.equal(typedValue('vienna'), 'vienna');
  assert.deepEqual(propertyFromExpression(parseExpressions('property(user.name(ada))')[0]!), prop('user.name', 'ada'));
  assert.equal(propertyFromExpression(parseExpressions('other.property(a(b))')[0]!), undefined);
});

test('no property expressions: nothing extracted, no properties:extracted entry', async () => {
  const task = await compile({});
  const turn = turnWith({ expressions: 'greeting(hello)' });
  await task.execute(turn);
  assert.equal(turn.properties.size, 0);
  assert.equal(turn.has('properties:extracted'), false);
});

test('context entries of type expressions named properties* are extracted likewise', async () => {
  const task = await compile({});
  const turn = turnWith({
    expressions: 'property(first(1))',
    context: {
      properties: { type: 'expressions', value: 'property(color(blue))' },
      propertiesMore: { type: 'expressions', value: 'property(size(2), step)' },
      propertiesObject: { type: 'object', value: { x: 'property(no(1))' } },
      other: { type: 'expressions', value: 'property(ignored(1))' },
    },
  });
  await task.execute(turn);
  assert.deepEqual(values(turn), { first: 1, color: 'blue', size: 2 });
  assert.equal(turn.properties.get('size')!.scope, 'step');
  assert.deepEqual(
    (turn.get('properties:extracted') as Property[]).map((p) => p.name),
    ['first', 'color', 'size'],
  );
});

test('CATCH_ANY_INPUT_AS_PROPERTY in the previous step stores the input as user_input', async () => {
  const task = await compile({});
  const caught = turnWith({
    input: 'my answer',
    steps: [storedStep(['CONVERSATION_START']), storedStep(['ask', 'CATCH_ANY_INPUT_AS_PROPERTY'])],
  });
  await task.execute(caught);
  assert.deepEqual(caught.properties.get('user_input'), prop('user_input', 'my answer'));

  const notPrevious = turnWith({
    input: 'x',
    actions: ['CATCH_ANY_INPUT_AS_PROPERTY'],
    steps: [storedStep(['CATCH_ANY_INPUT_AS_PROPERTY']), storedStep(['ask'])],
  });
  await task.execute(notPrevious);
  assert.equal(
    notPrevious.properties.has('user_input'),
    false,
    'only the previous step counts, not the current or older ones',
  );
});

// --- instructions -----------------------------------------------------------------------------------------------

test('propertyInstructions run on every turn, once, whatever the actions', async () => {
  const task = await compile(
    { uri: SETTER_URI },
    {
      propertyInstructions: [
        { name: 'chosenCity', fromObjectPath: 'memory.current.input' },
        { name: 'turns', fromObjectPath: 'properties.turns+1' },
      ],
    },
  );
  const none = turnWith({ input: 'Vienna' });
  await task.execute(none);
  assert.deepEqual(values(none), { chosenCity: 'Vienna', turns: 1 });
  const two = turnWith({ input: 'Graz', actions: ['a', 'b'], properties: { turns: prop('turns', 4) } });
  await task.execute(two);
  assert.deepEqual(values(two), { turns: 5, chosenCity: 'Graz' });
});

test('setOnActions run for each action in order; * runs once per action; an identical instruction once per action', async () => {
  const counter = { name: 'count', fromObjectPath: 'properties.count+1' };
  const task = await compile(
    onActions(
      [['*'], [counter]],
      ['a', [counter, { name: 'log', fromObjectPath: "properties.log+'|a'" }]],
      [['b', 'c'], [{ name: 'log', fromObjectPath: "properties.log+'|b'" }]],
    ),
  );
  const ab = turnWith({ actions: ['b', 'a'] });
  await task.execute(ab);
  assert.deepEqual(
    values(ab),
    { count: 2, log: '|b|a' },
    "count once per action even though 'a' also lists the counter",
  );

  const single = turnWith({ actions: ['a'] });
  await task.execute(single);
  assert.deepEqual(values(single), { count: 1, log: '|a' });

  const other = turnWith({ actions: ['x', 'y', 'z'] });
  await task.execute(other);
  assert.deepEqual(values(other), { count: 3 }, 'actions no entry names still run the * instructions');

  const idle = turnWith({ actions: [] });
  await task.execute(idle);
  assert.equal(idle.properties.size, 0);
});

test('a single action may be written as text', async () => {
  const task = await compile(onActions(['greet', [{ name: 'greeted', valueBoolean: true }]]));
  const turn = turnWith({ actions: ['greet'] });
  await task.execute(turn);
  assert.deepEqual(values(turn), { greeted: true });
});

test('inline setOnActions run before the referenced setter; extensions.uri also names the setter', async () => {
  const stored = {
    setOnActions: [{ actions: ['a'], setProperties: [{ name: 'log', fromObjectPath: "properties.log+'stored'" }] }],
  };
  const inline = onActions(['a', [{ name: 'log', fromObjectPath: "properties.log+'inline,'" }]]);
  for (const task of [
    await compile({ ...inline, uri: SETTER_URI }, stored),
    await compile(inline, stored, { uri: SETTER_URI }),
  ]) {
    const turn = turnWith({ actions: ['a'] });
    await task.execute(turn);
    assert.deepEqual(values(turn), { log: 'inline,stored' });
  }
});

test('override false keeps an existing property', async () => {
  const task = await compile(
    onActions([
      '*',
      [
        { name: 'count', valueInt: 0, override: false },
        { name: 'city', valueString: 'Graz', override: true },
      ],
    ]),
  );
  const existing = turnWith({ actions: ['a'], properties: { count: prop('count', 7), city: prop('city', 'Linz') } });
  await task.execute(existing);
  assert.deepEqual(values(existing), { count: 7, city: 'Graz' });
  assert.equal(existing.has('properties:count'), false, 'a skipped instruction writes nothing');
  const fresh = turnWith({ actions: ['a'] });
  await task.execute(fresh);
  assert.deepEqual(values(fresh), { count: 0, city: 'Graz' });
});

test('toObjectPath copies into the data of this run only and sets no property', async () => {
  const task = await compile(
    onActions(
      [
        'weather',
        [
          {
            name: 'ignored',
            fromObjectPath: 'memory.current.httpCalls.currentWeather.main',
            toObjectPath: 'weather.now',
          },
          { fromObjectPath: "'copied'", toObjectPath: 'memory.current.extra' },
          { name: 'temp', fromObjectPath: 'weather.now.temp' },
          { name: 'label', valueString: '{weather.now.temp} degrees, {memory.current.extra}' },
        ],
      ],
      ['later', [{ name: 'seen', fromObjectPath: 'weather.now.temp' }]],
    ),
  );
  const turn = turnWith({ actions: ['weather'], httpCalls: { currentWeather: { main: { temp: 12.3 } } } });
  await task.execute(turn);
  assert.deepEqual(values(turn), { temp: 12.3, label: '12.3 degrees, copied' });
  assert.equal(turn.output.extra, undefined, 'the step output is not changed');
  assert.deepEqual(turn.output.httpCalls, { currentWeather: { main: { temp: 12.3 } } });

  const later = turnWith({ actions: ['later'] });
  await task.execute(later);
  assert.equal(later.properties.size, 0, 'the copy does not outlive the run');
});

test('value fields: each one alone, and the last non-null wins', async () => {
  const cases: Array<[object, unknown]> = [
    [{ valueString: 'text' }, 'text'],
    [{ valueObject: { a: 1 } }, { a: 1 }],
    [{ valueList: [1, 'two'] }, [1, 'two']],
    [{ valueInt: 5 }, 5],
    [{ valueFloat: 2.75 }, 2.75],
    [{ valueBoolean: false }, false],
    [{ valueString: 'text', valueInt: 5 }, 5],
    [{ valueInt: 5, valueFloat: 0.5 }, 0.5],
    [
      { valueString: 'text', valueObject: { a: 1 }, valueList: [1], valueInt: 1, valueFloat: 1.5, valueBoolean: true },
      true,
    ],
    [{ valueList: [1], valueString: 'text' }, [1]],
    [{ valueString: '' }, ''],
  ];
  for (const [fields, expected] of cases) {
    const task = await compile(onActions(['*', [{ name: 'p', ...fields }]]));
    const turn = turnWith({ actions: ['a'] });
    await task.execute(turn);
    assert.deepEqual(turn.properties.get('p')?.value, expected, JSON.stringify(fields));
  }
  const stored = await compile(
    { uri: SETTER_URI },
    onActions(['*', [{ name: 'p', valueString: 'text', valueInt: null }]]),
  );
  const storedTurn = turnWith({ actions: ['a'] });
  await stored.execute(storedTurn);
  assert.equal(storedTurn.properties.get('p')?.value, 'text', 'a null value field is skipped');
  const nothing = await compile(onActions(['*', [{ name: 'p' }]]));
  const turn = turnWith({ actions: ['a'] });
  await nothing.execute(turn);
  assert.equal(turn.properties.has('p'), false, 'no value field: nothing set');
});

test('literal objects and lists are stored as copies, never shared with the configuration', async () => {
  const config = onActions(['*', [{ name: 'o', valueObject: { nested: { n: 1 } } }]]);
  const task = await compile(config);
  const first = turnWith({ actions: ['a'] });
  await task.execute(first);
  const value = first.properties.get('o')!.value as { nested: { n: number } };
  value.nested.n = 99;
  const second = turnWith({ actions: ['a'] });
  await task.execute(second);
  assert.deepEqual(second.properties.get('o')!.value, { nested: { n: 1 } });
});

test('names and configured text values are templated; text found at a path is stored as it is; later instructions see earlier results', async () => {
  const task = await compile(
    onActions([
      '*',
      [
        { name: 'name', valueString: 'Ada' },
        { name: 'greeting_{memory.current.input}', valueString: 'Hello {properties.name}!' },
        { name: 'fromContext', fromObjectPath: 'context.template' },
        { name: 'plain', fromObjectPath: 'context.braces' },
      ],
    ]),
  );
  const turn = turnWith({
    actions: ['a'],
    input: 'Vienna',
    context: {
      template: { type: 'string', value: 'Hi {properties.name}' },
      braces: { type: 'string', value: '{ not a template } {"a":1}' },
    },
  });
  await task.execute(turn);
  assert.deepEqual(values(turn), {
    name: 'Ada',
    greeting_Vienna: 'Hello Ada!',
    fromContext: 'Hi {properties.name}',
    plain: '{ not a template } {"a":1}',
  });
});

test('numbers, objects and lists from a path keep their type', async () => {
  const weather = {
    main: { temp: 12.3, pressure: 1013 },
    weather: [{ description: 'fog' }],
    id: 9_007_199_254_740_000,
  };
  const task = await compile(
    onActions([
      '*',
      [
        { name: 'temp', fromObjectPath: 'memory.current.httpCalls.weather.main.temp' },
        { name: 'pressure', fromObjectPath: 'memory.current.httpCalls.weather.main.pressure' },
        { name: 'id', fromObjectPath: 'memory.current.httpCalls.weather.id' },
        { name: 'main', fromObjectPath: 'memory.current.httpCalls.weather.main' },
        { name: 'list', fromObjectPath: 'memory.current.httpCalls.weather.weather' },
        { name: 'warmer', fromObjectPath: 'properties.temp+1' },
        { name: 'flag', fromObjectPath: 'context.flag' },
        { name: 'missing', fromObjectPath: 'memory.current.httpCalls.weather.nothing' },
        { name: 'nullValue', fromObjectPath: 'context.nothing' },
      ],
    ]),
  );
  const turn = turnWith({
    actions: ['a'],
    httpCalls: { weather },
    context: { flag: { type: 'object', value: true }, nothing: { type: 'object', value: null } },
  });
  await task.execute(turn);
  assert.deepEqual(values(turn), {
    temp: 12.3,
    pressure: 1013,
    id: 9_007_199_254_740_000,
    main: { temp: 12.3, pressure: 1013 },
    list: [{ description: 'fog' }],
    warmer: 13.3,
    flag: true,
  });
  assert.notEqual(turn.properties.get('main')!.value, weather.main, 'stored as a copy');
});

test('scopes: conversation by default, step and longTerm as given; step-scoped properties end with the turn', async () => {
  const task = await compile(
    onActions([
      '*',
      [
        { name: 'c', valueInt: 1 },
        { name: 's', valueInt: 2, scope: 'step' },
        { name: 'l', valueInt: 3, scope: 'longTerm' },
        { name: 'x', valueInt: 4, scope: 'conversation' },
      ],
    ]),
  );
  const turn = turnWith({ actions: ['a'] });
  await task.execute(turn);
  assert.deepEqual(
    [...turn.properties.values()],
    [prop('c', 1), prop('s', 2, 'step'), prop('l', 3, 'longTerm'), prop('x', 4)],
  );
  assert.deepEqual(turn.output.properties, { c: 1, s: 2, l: 3, x: 4 });
  const { properties, step } = turn.finish();
  assert.deepEqual(Object.keys(properties), ['c', 'l', 'x']);
  assert.deepEqual(step.output.properties, { c: 1, l: 3, x: 4 });
});

// --- the weather fixture (reference Appendix C.3) ---------------------------------------------------------------

test('weather fixture: a long-term counter started on CONVERSATION_START, chosenCity and step-scoped weather', async () => {
  const task = await compile(
    onActions(
      [['CONVERSATION_START'], [{ name: 'count', valueInt: 0, scope: 'longTerm', override: false }]],
      [['*'], [{ name: 'count', fromObjectPath: 'properties.count+1', scope: 'longTerm' }]],
      [
        ['current_weather_in_city'],
        [
          { name: 'chosenCity', fromObjectPath: 'memory.current.input', scope: 'conversation' },
          {
            name: 'currentWeather',
            fromObjectPath: 'memory.current.httpCalls.currentWeather.weather[0].description',
            scope: 'step',
          },
          {
            name: 'currentTemperature',
            fromObjectPath: 'memory.current.httpCalls.currentWeather.main.temp',
            scope: 'step',
          },
        ],
      ],
    ),
  );

  const steps: StoredStep[] = [];
  let properties: Record<string, Property> = {};
  const run = async (options: TurnOptions) => {
    const turn = turnWith({ ...options, steps, properties });
    await task.execute(turn);
    const finished = turn.finish();
    steps.push(finished.step);
    properties = finished.properties;
    return turn;
  };

  const start = await run({ actions: ['CONVERSATION_START'] });
  assert.deepEqual(start.properties.get('count'), prop('count', 1, 'longTerm'), 'set to 0, then counted by *');
  await run({ input: 'weather', actions: ['ask_for_city'] });
  assert.deepEqual(properties.count, prop('count', 2, 'longTerm'));
  const vienna = await run({
    input: 'Vienna',
    actions: ['current_weather_in_city'],
    httpCalls: { currentWeather: { weather: [{ description: 'light rain' }], main: { temp: 12.3 } } },
  });
  assert.deepEqual(
    vienna.properties.get('currentTemperature'),
    prop('currentTemperature', 12.3, 'step'),
    'a float temperature is kept',
  );
  assert.deepEqual(vienna.properties.get('currentWeather'), prop('currentWeather', 'light rain', 'step'));
  assert.deepEqual(properties, {
    count: prop('count', 3, 'longTerm'),
    chosenCity: prop('chosenCity', 'Vienna'),
  });

  const returning = turnWith({ actions: ['CONVERSATION_START'], properties: { count: prop('count', 41, 'longTerm') } });
  await task.execute(returning);
  assert.equal(returning.properties.get('count')!.value, 42, 'a returning user keeps counting');
});

// --- failures ---------------------------------------------------------------------------------------------------

// --- scope secret -----------------------------------------------------------------------------------------------

const SECRET = 'sk-secret-value-0123456789';

async function compileWithVault(
  config: Record<string, unknown>,
): Promise<{ task: CompiledTask; vault: Vault; close(): Promise<void> }> {
  const storage = await openSqliteStorage(':memory:');
  const vault = await openVault(storage.secrets, 'a master key for property tests');
  const task = await compileStep(propertyTask, { config }, async () => ({}), { secretWriter: vault });
  return { task, vault, close: () => storage.close() };
}

/** Every text of the step (data and output), as JSON. */
const stepText = (turn: Turn) => JSON.stringify(turn.finish().step);

test('a secret-scoped property stores its value in the vault as <agentId>.<name> and keeps only the reference', async () => {
  const { task, vault, close } = await compileWithVault(
    onActions([
      '*',
      [
        { name: 'apiKey', valueString: SECRET, scope: 'secret' },
        { name: 'echo', valueString: 'key is {properties.apiKey}' },
      ],
    ]),
  );
  try {
    const turn = turnWith({ actions: ['a'] });
    await task.execute(turn);
    assert.deepEqual(turn.properties.get('apiKey'), prop('apiKey', '${vault:a.apiKey}'));
    assert.equal(
      turn.properties.get('echo')!.value,
      'key is ${vault:a.apiKey}',
      'later instructions see the reference',
    );
    assert.deepEqual(turn.get('properties:apiKey'), [prop('apiKey', '${vault:a.apiKey}')]);
    assert.ok(!stepText(turn).includes(SECRET));
    assert.equal((await vault.resolver().resolve('${vault:a.apiKey}')).text, SECRET);
  } finally {
    await close();
  }
});

test('a secret taken from the input or the context is scrubbed from the step', async () => {
  const { task, vault, close } = await compileWithVault(
    onActions(
      ['fromInput', [{ name: 'token', fromObjectPath: 'memory.current.input', scope: 'secret' }]],
      ['fromContext', [{ name: 'password', fromObjectPath: 'context.login.password', scope: 'secret' }]],
    ),
  );
  try {
    const fromInput = turnWith({ actions: ['fromInput'], input: SECRET });
    fromInput.set('input:initial', SECRET, true);
    await task.execute(fromInput);
    assert.equal(fromInput.output.input, '<REDACTED>');
    assert.equal(fromInput.get('input:initial'), '<REDACTED>');
    assert.ok(!stepText(fromInput).includes(SECRET));

    const password = 'correct horse battery staple';
    const login = { type: 'object' as const, value: { user: 'ada', password } };
    const fromContext = turnWith({ actions: ['fromContext'], context: { login } });
    fromContext.set('context:login', login);
    fromContext.setOutput('context', { login: login.value });
    await task.execute(fromContext);
    assert.deepEqual(fromContext.get('context:login'), {
      type: 'object',
      value: { user: 'ada', password: '<REDACTED>' },
    });
    assert.ok(!stepText(fromContext).includes(password));
    assert.equal((await vault.resolver().resolve('${vault:a.password}')).text, password);
  } finally {
    await close();
  }
});

test('without a vault, or with a disabled one, a secret-scoped property fails the turn and keeps nothing', async () => {
  const config = onActions([
    '*',
    [
      { name: 'before', valueInt: 1 },
      { name: 'apiKey', valueString: SECRET, scope: 'secret' },
      { name: 'fromInput', fromObjectPath: 'memory.current.input', scope: 'secret' },
    ],
  ]);
  const withoutVault = await compile(config);
  const turn = turnWith({ actions: ['a'], input: 'typed-secret-value' });
  await assert.rejects(
    async () => withoutVault.execute(turn),
    (error: Error) => {
      assert.match(
        error.message,
        /secret-scoped property 'apiKey' cannot be set: this service has no secrets vault \(set svc\.vault\.master-key\)/,
      );
      assert.ok(!error.message.includes(SECRET));
      return true;
    },
  );
  assert.equal(turn.properties.has('apiKey'), false);
  assert.equal(turn.properties.get('before')!.value, 1, 'instructions before it ran');
  assert.equal(turn.properties.has('fromInput'), false);
  assert.equal(turn.output.input, '<REDACTED>', 'the value of a later secret instruction is scrubbed too');
  assert.ok(!stepText(turn).includes(SECRET));

  const storage = await openSqliteStorage(':memory:');
  try {
    const disabled = await openVault(storage.secrets, undefined);
    const task = await compileStep(propertyTask, { config }, async () => ({}), { secretWriter: disabled });
    await assert.rejects(
      async () => task.execute(turnWith({ actions: ['a'] })),
      /'apiKey' cannot be set: The vault is disabled: set svc\.vault\.master-key/,
    );
  } finally {
    await storage.close();
  }
});

test('a secret-scoped property whose vault name breaks the naming rules fails the turn; an empty value sets nothing', async () => {
  const { task, close } = await compileWithVault(
    onActions(
      ['bad', [{ name: 'my key', valueString: SECRET, scope: 'secret' }]],
      ['empty', [{ name: 'blank', fromObjectPath: 'memory.current.input', scope: 'secret' }]],
    ),
  );
  try {
    await assert.rejects(
      async () => task.execute(turnWith({ actions: ['bad'] })),
      /vault name 'a\.my key' is not a valid secret name/,
    );
    const empty = turnWith({ actions: ['empty'], input: '' });
    empty.setOutput('input', '');
    await task.execute(empty);
    assert.equal(empty.properties.has('blank'), false);
  } finally {
    await close();
  }
});

test('scope secret compiles from a stored setter too', async () => {
  await compile(
    { uri: SETTER_URI },
    { propertyInstructions: [{ name: 'apiKey', valueString: 'abc', scope: 'secret' }] },
  );
});

test('malformed paths and unknown scopes are refused at deployment', async () => {
  await assert.rejects(compile(onActions(['*', [{ name: 'p', fromObjectPath: 'a..b' }]])), DeploymentError);
  await assert.rejects(compile(onActions(['*', [{ name: 'p', fromObjectPath: "'open" }]])), /malformed path/);
  await assert.rejects(compile(onActions(['*', [{ fromObjectPath: 'a', toObjectPath: 'x[' }]])), DeploymentError);
  await assert.rejects(
    compile({ uri: SETTER_URI }, onActions(['*', [{ name: 'p', valueInt: 1, scope: 'forever' }]])),
    /unknown scope 'forever'/,
  );
  await assert.rejects(
    compile(onActions(['*', [{ name: 'p', valueInt: 1, scope: 'forever' }]])),
    /\$\.config\.setOnActions\[0\]\.setProperties\[0\]\.scope/,
  );
});

test('a malformed template is refused at deployment', async () => {
  await assert.rejects(
    compile(onActions(['*', [{ name: 'p', valueString: '{#if x}open' }]])),
    /property instruction at config\.setOnActions\[0\]\.setProperties\[0\] has a malformed template/,
  );
  await assert.rejects(compile(onActions(['*', [{ name: '{#for}', valueInt: 1 }]])), DeploymentError);
});

test('template and path evaluation errors throw out of execute', async () => {
  const badTemplate = await compile(onActions(['*', [{ name: 'p', valueString: '{#for i in context.many}x{/for}' }]]));
  const many = { type: 'object' as const, value: Array.from({ length: MAX_ITERATIONS + 1 }, (_, i) => i) };
  await assert.rejects(
    async () => badTemplate.execute(turnWith({ actions: ['a'], context: { many } })),
    /loop iterations/,
  );
  const badArithmetic = await compile(onActions(['*', [{ name: 'p', fromObjectPath: 'properties.name-1' }]]));
  await assert.rejects(
    async () => badArithmetic.execute(turnWith({ actions: ['a'], properties: { name: prop('name', 'Ada') } })),
    /cannot subtract/,
  );
});
