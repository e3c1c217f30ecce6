import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Property } from '../runtime/memory.ts';
import { DeploymentError } from '../runtime/tasks.ts';
import type { Turn } from '../runtime/turn.ts';
import { openVault } from '../security/vault.ts';
import { openSqliteStorage } from '../storage/sqlite/sqlite-storage.ts';
import { TemplateData } from '../templating/data-model.ts';
import { compilePropertyInstructions } from './instructions.ts';
import { runPropertyInstructions, type InstructionRun } from './run-instructions.ts';
import { testTurn } from '../../test/support/turns.ts';

/** The property-instruction engine on its own: compile once, run on a turn with a task run's template data. */

function turnWith(options: { input?: string; properties?: Record<string, Property> } = {}): Turn {
  const turn = testTurn({ agentId: 'agent1', input: options.input, properties: options.properties });
  if (options.input !== undefined) turn.setOutput('input', options.input);
  return turn;
}

const values = (turn: Turn) =>
  Object.fromEntries([...turn.properties].map(([name, property]) => [name, property.value]));

async function run(
  list: unknown[],
  options: Partial<InstructionRun> & { extra?: Record<string, unknown> } = {},
): Promise<Turn> {
  const turn = options.turn ?? turnWith();
  const instructions = compilePropertyInstructions(list, 'test');
  await runPropertyInstructions(instructions, {
    turn,
    data: options.data ?? new TemplateData(turn, options.extra),
    ...options,
  });
  return turn;
}

test('values: a path keeps the type it finds, text is rendered, literals are copies; later instructions see earlier ones', async () => {
  const literal = { nested: [1] };
  const turn = await run(
    [
      { name: 'temp', fromObjectPath: 'answer.main.temp' },
      { name: 'main', fromObjectPath: 'answer.main' },
      { name: 'greeting', valueString: 'It is {properties.temp} degrees in {answer.city}' },
      { name: 'object', valueObject: literal },
      { name: 'templated_{answer.city}', valueBoolean: true },
      { name: 'missing', fromObjectPath: 'answer.nothing' },
      { name: 'raw', fromObjectPath: 'answer.template' },
    ],
    { extra: { answer: { city: 'Graz', main: { temp: 12.5 }, template: '{properties.temp}' } } },
  );
  assert.deepEqual(values(turn), {
    temp: 12.5,
    main: { temp: 12.5 },
    greeting: 'It is 12.5 degrees in Graz',
    object: { nested: [1] },
    templated_Graz: true,
    raw: '{properties.temp}',
  });
  assert.notEqual(turn.properties.get('object')!.value, literal, 'never the configuration object itself');
});

test('toObjectPath copies into the run data only; override false keeps an existing property; scopes as given', async () => {
  const turn = turnWith({ properties: { kept: { name: 'kept', value: 'old', scope: 'conversation' } } });
  const data = new TemplateData(turn, { answer: { id: 7 } });
  await run(
    [
      { fromObjectPath: 'answer.id', toObjectPath: 'scratch.id' },
      { name: 'id', fromObjectPath: 'scratch.id', scope: 'step' },
      { name: 'kept', valueString: 'new', override: false },
      { name: 'forever', valueInt: 1, scope: 'longTerm' },
    ],
    { turn, data },
  );
  assert.deepEqual(values(turn), { kept: 'old', id: 7, forever: 1 });
  assert.equal(turn.properties.get('id')!.scope, 'step');
  assert.equal(turn.properties.get('forever')!.scope, 'longTerm');
  assert.deepEqual(data.get().scratch, { id: 7 });
  assert.equal(new TemplateData(turn).get().scratch, undefined, 'a copy lives in one run');
});

test('convertToObject parses a {...} text from a path or a valueString; other text stays text', async () => {
  const turn = await run(
    [
      { name: 'fromPath', fromObjectPath: 'answer', convertToObject: true },
      { name: 'fromTemplate', valueString: '{"city": "{properties.fromPath.city}"}', convertToObject: true },
      { name: 'plain', valueString: 'no object', convertToObject: true },
      { name: 'unconverted', fromObjectPath: 'answer' },
    ],
    { extra: { answer: ' {"city":"Linz"} ' } },
  );
  assert.deepEqual(values(turn), {
    fromPath: { city: 'Linz' },
    fromTemplate: { city: 'Linz' },
    plain: 'no object',
    unconverted: ' {"city":"Linz"} ',
  });
});

test('an HTTP outcome runs only the instructions whose validator passes the status (and runOnValidationError)', async () => {
  const list = [
    { name: 'ok', valueInt: 1 },
    { name: 'notFound', valueInt: 2, httpCodeValidator: { runOnHttpCode: [404] } },
    { name: 'notCreated', valueInt: 3, httpCodeValidator: { skipOnHttpCode: [201] } },
    { name: 'evenIfInvalid', valueInt: 4, runOnValidationError: true },
  ];
  assert.deepEqual(values(await run(list, { outcome: { status: 201, validationFailed: false } })), {
    ok: 1,
    evenIfInvalid: 4,
  });
  assert.deepEqual(values(await run(list, { outcome: { status: 404, validationFailed: false } })), { notFound: 2 });
  assert.deepEqual(values(await run(list, { outcome: { status: 200, validationFailed: true } })), { evenIfInvalid: 4 });
  assert.deepEqual(
    values(await run(list)),
    { ok: 1, notFound: 2, notCreated: 3, evenIfInvalid: 4 },
    'no outcome: every instruction runs',
  );
});

test('a failing instruction fails the run, or with skipFailed is reported and the next one runs', async () => {
  const list = [
    { name: 'a', fromObjectPath: 'properties.text-1' },
    { name: 'b', valueInt: 2 },
  ];
  const properties = { text: { name: 'text', value: 'abc', scope: 'conversation' as const } };
  await assert.rejects(run(list, { turn: turnWith({ properties }) }), /cannot subtract/);

  const skipped: Array<[number, string]> = [];
  const turn = await run(list, {
    turn: turnWith({ properties }),
    skipFailed: (error, index) => skipped.push([index, (error as Error).message]),
  });
  assert.equal(turn.properties.get('b')!.value, 2);
  assert.equal(skipped.length, 1);
  assert.equal(skipped[0]![0], 0);
  assert.match(skipped[0]![1], /cannot subtract/);
});

test('scope secret: the value goes to the vault, the property keeps the reference, the step loses the value', async () => {
  const storage = await openSqliteStorage(':memory:');
  try {
    const vault = await openVault(storage.secrets, 'a master key for engine tests');
    const token = 'tok-0123456789-abcdef';
    const turn = turnWith({ input: `my token is ${token}` });
    await run(
      [
        { name: 'token', fromObjectPath: 'answer.token', scope: 'secret' },
        { name: 'echo', valueString: '{properties.token}' },
      ],
      {
        turn,
        extra: { answer: { token } },
        secretWriter: vault,
        skipFailed: () => assert.fail('a secret is not skipped'),
      },
    );
    assert.deepEqual(values(turn), { token: '${vault:agent1.token}', echo: '${vault:agent1.token}' });
    assert.equal(turn.output.input, 'my token is <REDACTED>');
    assert.equal((await vault.resolver().resolve('${vault:agent1.token}')).text, token);

    const withoutVault = turnWith({ input: token });
    await assert.rejects(
      run([{ name: 'token', fromObjectPath: 'memory.current.input', scope: 'secret' }], {
        turn: withoutVault,
        skipFailed: () => undefined,
      }),
      /'token' cannot be set: this service has no secrets vault/,
    );
    assert.equal(withoutVault.output.input, '<REDACTED>', 'fail-closed, also where failures are otherwise skipped');
  } finally {
    await storage.close();
  }
});

test('compilation refuses what cannot run, naming the instruction', () => {
  assert.throws(
    () => compilePropertyInstructions([{ name: 'p', scope: 'forever' }], 'x'),
    /instruction at x\[0\] has the unknown scope 'forever'/,
  );
  assert.throws(
    () => compilePropertyInstructions([{ name: 'p', fromObjectPath: 'a..b' }], 'x'),
    /instruction at x\[0\] has a malformed path/,
  );
  assert.throws(
    () => compilePropertyInstructions([{ name: '{#if}', valueInt: 1 }], 'x'),
    /instruction at x\[0\] has a malformed template/,
  );
  assert.throws(() => compilePropertyInstructions(['text'], 'x'), DeploymentError);
  assert.throws(() => compilePropertyInstructions({}, 'x'), /x must be a list/);
  assert.deepEqual(compilePropertyInstructions(undefined, 'x'), []);
});

test('constant names and values never build the template data (the common case stays cheap)', async () => {
  class CountedData extends TemplateData {
    reads = 0;
    override get(): Record<string, unknown> {
      this.reads++;
      return super.get();
    }
  }
  const turn = turnWith();
  const data = new CountedData(turn);
  await run(
    [
      { name: 'count', valueInt: 0 },
      { name: 'city', valueString: 'Graz' },
      { name: 'list', valueList: [1] },
    ],
    { turn, data },
  );
  assert.deepEqual(values(turn), { count: 0, city: 'Graz', list: [1] });
  assert.equal(data.reads, 0);
  await run([{ name: 'greeting', valueString: 'Hi {properties.city}' }], { turn, data });
  assert.equal(turn.properties.get('greeting')!.value, 'Hi Graz');
  assert.equal(data.reads, 1);
});
