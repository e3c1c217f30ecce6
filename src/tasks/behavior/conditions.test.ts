import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeploymentError } from '../../runtime/tasks.ts';
import type { BehaviorConditionDefinition } from './conditions.ts';
import { sizeOf, textOf } from './conditions.ts';
import type { Turn } from '../../runtime/turn.ts';
import { compileSet, Dialogue, fires, oneRule, type StepInput } from '../../../test/support/behavior.ts';

const successOf = (turn: Turn) => (turn.get('behavior_rules:success') as string[] | undefined)?.includes('R') ?? false;

/** One test per condition type (reference §4.3): cases that must match and cases that must not. */

const input = (expressions: string, occurrence?: string): BehaviorConditionDefinition => ({
  type: 'inputmatcher',
  configs: occurrence === undefined ? { expressions } : { expressions, occurrence },
});
const action = (actions: string, occurrence?: string): BehaviorConditionDefinition => ({
  type: 'actionmatcher',
  configs: occurrence === undefined ? { actions } : { actions, occurrence },
});
const task = (...conditions: BehaviorConditionDefinition[]) => compileSet(oneRule(...conditions));

/** Step 0 (start, no expressions), then one user step per text. */
const said = (...texts: string[]): StepInput[] => [{}, ...texts.map((expressions) => ({ expressions }))];

test('inputmatcher, currentStep (default): contiguous ordered sub-list, wildcard, arity, empty', async () => {
  const greeting = await task(input('greeting(*)'));
  assert.equal(await fires(greeting, { expressions: 'greeting(hello)' }, said()), true);
  assert.equal(await fires(greeting, { expressions: 'unknown(x), greeting(hello), unknown(y)' }, said()), true);
  assert.equal(await fires(greeting, { expressions: 'goodbye(bye)' }, said()), false);
  assert.equal(await fires(greeting, {}, said()), false, 'no parsed expressions');
  assert.equal(
    await fires(await task(input('greeting')), { expressions: 'greeting(hello)' }, said()),
    false,
    'arity differs',
  );
  assert.equal(await fires(await task(input('*')), { expressions: 'anything(at_all)' }, said()), true);
  assert.equal(
    await fires(await task(input('property(car(*))')), { expressions: 'property(car(BMW(X5)))' }, said()),
    true,
  );
  assert.equal(
    await fires(await task(input('decimal(3.0)')), { expressions: 'decimal(3)' }, said()),
    true,
    'numbers compare numerically',
  );

  const pair = await task(input('a(*), b(*)'));
  assert.equal(await fires(pair, { expressions: 'a(x), b(y)' }, said()), true);
  assert.equal(await fires(pair, { expressions: 'c(z), a(x), b(y), c(w)' }, said()), true);
  assert.equal(await fires(pair, { expressions: 'b(y), a(x)' }, said()), false, 'order matters');
  assert.equal(await fires(pair, { expressions: 'a(x), c(z), b(y)' }, said()), false, 'must be contiguous');

  const empty = await task(input('empty'));
  assert.equal(await fires(empty, {}, said()), true);
  assert.equal(await fires(empty, {}), true, 'step 0');
  assert.equal(await fires(empty, { expressions: 'greeting(hello)' }, said()), false);

  assert.equal(
    await fires(await task(input('greeting(*)', 'currentStep')), { expressions: 'greeting(hi)' }, said('goodbye(bye)')),
    true,
  );
  assert.equal(
    await fires(await task(input('greeting(*)', 'currentStep')), { expressions: 'goodbye(bye)' }, said('greeting(hi)')),
    false,
  );
});

test('inputmatcher, lastStep: the previous step only; FAIL on step 0', async () => {
  const last = await task(input('greeting(*)', 'lastStep'));
  assert.equal(await fires(last, { expressions: 'goodbye(bye)' }, said('greeting(hi)')), true);
  assert.equal(
    await fires(last, { expressions: 'greeting(hi)' }, said('goodbye(bye)')),
    false,
    'the current step does not count',
  );
  assert.equal(
    await fires(last, { expressions: 'x' }, said('greeting(hi)', 'goodbye(bye)')),
    false,
    'only the last step',
  );
  assert.equal(await fires(last, {}), false, 'step 0 has no last step');
  const lastPair = await task(input('a(*), b(*)', 'lastStep'));
  assert.equal(await fires(lastPair, {}, said('a(1), b(2)')), true);
  assert.equal(await fires(lastPair, {}, said('a(1), c(3), b(2)')), false);
  const lastEmpty = await task(input('empty', 'lastStep'));
  assert.equal(await fires(lastEmpty, { expressions: 'x' }, said()), true, 'step 0 had no expressions');
  assert.equal(await fires(lastEmpty, { expressions: 'x' }, said('y')), false);
  assert.equal(await fires(lastEmpty, {}), false, 'step 0');
});

test('inputmatcher, anyStep and never: every step including the current one', async () => {
  const any = await task(input('greeting(*)', 'anyStep'));
  const never = await task(input('greeting(*)', 'never'));
  for (const [current, history, expected] of [
    ['greeting(hi)', said(), true],
    ['goodbye(bye)', said('greeting(hello)', 'goodbye(bye)'), true],
    ['goodbye(bye)', said('x(1)', 'goodbye(bye)'), false],
    [undefined, said('y(2), greeting(hey), z(3)'), true],
    [undefined, said(), false],
  ] as const) {
    const step = current === undefined ? {} : { expressions: current };
    assert.equal(await fires(any, step, history), expected, `anyStep ${current} after ${JSON.stringify(history)}`);
    assert.equal(await fires(never, step, history), !expected, `never ${current} after ${JSON.stringify(history)}`);
  }
  assert.equal(await fires(any, { expressions: 'greeting(hi)' }), true, 'step 0 itself counts');

  const anyPair = await task(input('a(*), b(*)', 'anyStep'));
  const neverPair = await task(input('a(*), b(*)', 'never'));
  assert.equal(await fires(anyPair, { expressions: 'x' }, said('q', 'a(1), b(2)', 'r')), true);
  assert.equal(await fires(neverPair, { expressions: 'x' }, said('q', 'a(1), b(2)', 'r')), false);
  assert.equal(
    await fires(anyPair, { expressions: 'b(2)' }, said('a(1)', 'b(2), a(1)', 'a(1), c, b(2)')),
    false,
    'both seen, never contiguous in one step',
  );
  assert.equal(await fires(neverPair, { expressions: 'b(2)' }, said('a(1)', 'b(2), a(1)', 'a(1), c, b(2)')), true);
  assert.equal(await fires(anyPair, { expressions: 'a(1), b(2)' }, said('a(1)')), true, 'the current step');

  const anyEmpty = await task(input('empty', 'anyStep'));
  const neverEmpty = await task(input('empty', 'never'));
  assert.equal(await fires(anyEmpty, { expressions: 'x' }, said('y')), true, 'step 0 had no expressions');
  assert.equal(await fires(neverEmpty, { expressions: 'x' }, said('y')), false);
  assert.equal(
    await fires(anyEmpty, { expressions: 'x' }, [{ expressions: 'z' }, { expressions: 'y' }]),
    false,
    'every step had expressions',
  );
  assert.equal(await fires(neverEmpty, { expressions: 'x' }, [{ expressions: 'z' }, { expressions: 'y' }]), true);
});

test('inputmatcher: an unparsable expressions config is a deployment error', async () => {
  await assert.rejects(task(input('greeting(')), DeploymentError);
  await assert.rejects(task(input('a', 'sometimes')), DeploymentError);
  await assert.rejects(task({ type: 'inputmatcher', configs: {} }), DeploymentError);
});

test('actionmatcher: contiguous and in order; empty; every occurrence', async () => {
  const start = await task(action('CONVERSATION_START'));
  assert.equal(await fires(start, {}), true, 'sees CONVERSATION_START on step 0');
  assert.equal(await fires(start, {}, said()), false);

  const pair = await task(action(' ask , confirm '));
  assert.equal(await fires(pair, { actions: ['x', 'ask', 'confirm', 'y'] }, said()), true);
  assert.equal(await fires(pair, { actions: ['confirm', 'ask'] }, said()), false, 'order');
  assert.equal(await fires(pair, { actions: ['ask', 'x', 'confirm'] }, said()), false, 'contiguity');
  assert.equal(await fires(pair, { actions: ['ask'] }, said()), false, 'all of them (AND, not OR)');

  const empty = await task(action('empty'));
  assert.equal(await fires(empty, {}, said()), true);
  assert.equal(await fires(empty, {}), false, 'step 0 has CONVERSATION_START');

  const history: StepInput[] = [{}, { actions: ['ask_for_city'] }, { actions: ['a', 'b'] }];
  const last = await task(action('a, b', 'lastStep'));
  assert.equal(await fires(last, {}, history), true);
  assert.equal(await fires(last, {}, history.slice(0, 2)), false);
  assert.equal(await fires(last, { actions: ['a', 'b'] }), false, 'step 0');
  assert.equal(await fires(await task(action('empty', 'lastStep')), {}, [{}, {}]), true);
  assert.equal(await fires(await task(action('empty', 'lastStep')), {}, [{}]), false);

  const anyCity = await task(action('ask_for_city', 'anyStep'));
  const neverCity = await task(action('ask_for_city', 'never'));
  assert.equal(await fires(anyCity, {}, history), true);
  assert.equal(await fires(neverCity, {}, history), false);
  assert.equal(await fires(anyCity, {}, [{}]), false);
  assert.equal(await fires(neverCity, {}, [{}]), true);
  assert.equal(await fires(anyCity, { actions: ['ask_for_city'] }, [{}]), true, 'the current step counts');
  assert.equal(await fires(neverCity, { actions: ['ask_for_city'] }, [{}]), false);
  assert.equal(await fires(await task(action('CONVERSATION_START', 'anyStep')), {}, history), true);

  const anyPair = await task(action('a, b', 'anyStep'));
  assert.equal(await fires(anyPair, {}, history), true);
  assert.equal(await fires(anyPair, {}, [{}, { actions: ['b', 'a'] }, { actions: ['a', 'x', 'b'] }]), false);
  assert.equal(await fires(await task(action('a, b', 'never')), {}, [{}, { actions: ['b', 'a'] }]), true);

  assert.equal(await fires(await task(action('empty', 'anyStep')), {}, [{}, {}]), true);
  assert.equal(await fires(await task(action('empty', 'never')), { actions: ['y'] }, [{}, { actions: ['x'] }]), true);
  assert.equal(
    await fires(await task(action('empty', 'never')), { actions: ['y'] }, [{}, {}, { actions: ['x'] }]),
    false,
  );
  assert.equal(
    await fires(await task(action('empty', 'never')), {}, [{}, { actions: ['x'] }]),
    false,
    'the current step is empty',
  );
});

test('occurrence: counts the rule in earlier steps and in this step before this task; min / max / -1', async () => {
  const occurrence = (configs: Record<string, string>) =>
    task({ type: 'occurrence', configs: { behaviorRuleName: 'Greeting', ...configs } });
  const ran = (times: number): StepInput[] => [
    {},
    ...Array.from({ length: times }, () => ({ data: { 'behavior_rules:success': ['Greeting'] } })),
  ];

  const atMostOnce = await occurrence({ maxTimesOccurred: '1' });
  assert.equal(await fires(atMostOnce, {}, ran(0)), true);
  assert.equal(await fires(atMostOnce, {}, ran(1)), true);
  assert.equal(await fires(atMostOnce, {}, ran(2)), false);

  const atLeastTwice = await occurrence({ minTimesOccurred: '2' });
  assert.equal(await fires(atLeastTwice, {}, ran(1)), false);
  assert.equal(await fires(atLeastTwice, {}, ran(2)), true);
  assert.equal(await fires(atLeastTwice, {}, ran(5)), true);

  const between = await occurrence({ minTimesOccurred: '1', maxTimesOccurred: '2' });
  assert.deepEqual(await Promise.all([0, 1, 2, 3].map((n) => fires(between, {}, ran(n)))), [false, true, true, false]);

  const unbounded = await occurrence({ minTimesOccurred: '-1', maxTimesOccurred: '-1' });
  assert.equal(await fires(unbounded, {}, ran(7)), true);

  assert.equal(
    await fires(atLeastTwice, { data: { 'behavior_rules:success': ['Greeting'] } }, ran(1)),
    true,
    'an earlier rules task of this step counts',
  );
  assert.equal(await fires(atMostOnce, { data: { 'behavior_rules:success': ['Other'] } }, ran(1)), true);

  // "Only once": the rule counts itself; fires on step 0, never again.
  const set = {
    behaviorGroups: [
      {
        behaviorRules: [
          {
            name: 'Welcome',
            actions: ['welcome'],
            conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
          },
        ],
      },
    ],
  };
  const welcome = await compileSet(set);
  const dialogue = new Dialogue();
  assert.deepEqual((await dialogue.say(welcome)).actions, ['CONVERSATION_START', 'welcome']);
  assert.deepEqual((await dialogue.say(welcome, { expressions: 'greeting(hi)' })).actions, []);
  assert.deepEqual((await dialogue.say(welcome, { expressions: 'greeting(hi)' })).get('behavior_rules:fail'), [
    'Welcome',
  ]);

  await assert.rejects(occurrence({}), DeploymentError);
  await assert.rejects(occurrence({ maxTimesOccurred: 'zero' }), DeploymentError);
});

test('negation: NOT(AND(children)); a child that cannot evaluate is passed on; Appendix C.2 NotGreetedYet', async () => {
  const notGreeted = {
    type: 'negation',
    conditions: [{ type: 'occurrence', configs: { behaviorRuleName: 'Greeting', minTimesOccurred: '1' } }],
  };
  const rule = await task(notGreeted);
  assert.equal(await fires(rule, {}, [{}]), true, 'never greeted');
  assert.equal(await fires(rule, {}, [{}, { data: { 'behavior_rules:success': ['Greeting'] } }]), false);

  const both = await task({ type: 'negation', conditions: [input('a'), input('b', 'lastStep')] });
  assert.equal(await fires(both, { expressions: 'a' }, said('b')), false, 'all children succeed');
  assert.equal(await fires(both, { expressions: 'a' }, said('c')), true, 'one child fails');
  assert.equal(await fires(both, { expressions: 'c' }, said('b')), true);

  const unevaluable = await task({
    type: 'negation',
    conditions: [{ type: 'sizematcher', configs: { valuePath: 'memory.current', min: '-1' } }],
  });
  assert.equal(await fires(unevaluable, {}, [{}]), false, 'not executed stays not executed');

  await assert.rejects(task({ type: 'negation', conditions: [] }), DeploymentError);
});

test('connector: AND (default, also when absent) and OR', async () => {
  const children = [input('a(*)'), action('x')];
  const and = await task({ type: 'connector', configs: { operator: 'AND' }, conditions: children });
  const implicit = await task({ type: 'connector', conditions: children });
  const or = await task({ type: 'connector', configs: { operator: 'OR' }, conditions: children });
  for (const [step, all, some] of [
    [{ expressions: 'a(1)', actions: ['x'] }, true, true],
    [{ expressions: 'a(1)' }, false, true],
    [{ actions: ['x'] }, false, true],
    [{ expressions: 'b(1)' }, false, false],
  ] as const) {
    assert.equal(await fires(and, step, [{}]), all, `AND ${JSON.stringify(step)}`);
    assert.equal(await fires(implicit, step, [{}]), all, `implicit AND ${JSON.stringify(step)}`);
    assert.equal(await fires(or, step, [{}]), some, `OR ${JSON.stringify(step)}`);
  }
  const orUnevaluable = await task({
    type: 'connector',
    configs: { operator: 'OR' },
    conditions: [{ type: 'sizematcher', configs: {} }, action('x')],
  });
  assert.equal(await fires(orUnevaluable, { actions: ['x'] }, [{}]), true);
  assert.equal(await fires(orUnevaluable, {}, [{}]), false);
  await assert.rejects(task({ type: 'connector', configs: { operator: 'AND' } }), DeploymentError);
});

test('contextmatcher: string, expressions, object; the runtime type must be the configured one; array never matches', async () => {
  const string = await task({
    type: 'contextmatcher',
    configs: { contextKey: 'k', contextType: 'string', string: 'someContextValue' },
  });
  assert.equal(await fires(string, { context: { k: { type: 'string', value: 'someContextValue' } } }, [{}]), true);
  assert.equal(await fires(string, { context: { k: { type: 'string', value: 'other' } } }, [{}]), false);
  assert.equal(await fires(string, { context: { other: { type: 'string', value: 'someContextValue' } } }, [{}]), false);
  assert.equal(
    await fires(string, { context: { k: { type: 'expressions', value: 'someContextValue' } } }, [{}]),
    false,
    'wrong runtime type',
  );
  assert.equal(
    await fires(string, {}, [{ context: { k: { type: 'string', value: 'someContextValue' } } }]),
    false,
    'only the current step',
  );

  const expressions = await task({
    type: 'contextmatcher',
    configs: { contextKey: 'k', contextType: 'expressions', expressions: 'expression(*), expression2(someOtherValue)' },
  });
  assert.equal(
    await fires(
      expressions,
      { context: { k: { type: 'expressions', value: 'x, expression(someValue), expression2(someOtherValue)' } } },
      [{}],
    ),
    true,
  );
  assert.equal(
    await fires(
      expressions,
      { context: { k: { type: 'expressions', value: 'expression2(someOtherValue), expression(someValue)' } } },
      [{}],
    ),
    false,
  );
  assert.equal(
    await fires(
      expressions,
      { context: { k: { type: 'string', value: 'expression(someValue), expression2(someOtherValue)' } } },
      [{}],
    ),
    false,
    'wrong runtime type',
  );

  const username = await task({
    type: 'contextmatcher',
    configs: { contextKey: 'userInfo', contextType: 'object', objectKeyPath: 'username' },
  });
  const nested = await task({
    type: 'contextmatcher',
    configs: {
      contextKey: 'userInfo',
      contextType: 'object',
      objectKeyPath: '$.profile.username',
      objectValue: 'John',
    },
  });
  const john = { userInfo: { type: 'object', value: { username: 'John', profile: { username: 'John' } } } } as const;
  assert.equal(await fires(username, { context: john }, [{}]), true);
  assert.equal(await fires(nested, { context: john }, [{}]), true);
  assert.equal(
    await fires(nested, { context: { userInfo: { type: 'object', value: { profile: { username: 'Jane' } } } } }, [{}]),
    false,
    'objectValue differs',
  );
  assert.equal(
    await fires(username, { context: { userInfo: { type: 'object', value: { name: 'John' } } } }, [{}]),
    false,
    'no such path',
  );
  assert.equal(
    await fires(username, { context: { userInfo: { type: 'string', value: 'John' } } }, [{}]),
    false,
    'wrong runtime type',
  );
  assert.equal(
    await fires(username, { context: { userInfo: { type: 'array', value: [{ username: 'John' }] } } }, [{}]),
    false,
    'array context',
  );
  const first = await task({
    type: 'contextmatcher',
    configs: { contextKey: 'list', contextType: 'object', objectKeyPath: '$[0].username' },
  });
  assert.equal(
    await fires(first, { context: { list: { type: 'object', value: [{ username: 'John' }] } } }, [{}]),
    true,
    'an object context holding a list',
  );
  assert.equal(
    await fires(first, { context: { list: { type: 'array', value: [{ username: 'John' }] } } }, [{}]),
    false,
    'an array context never matches',
  );
  const count = await task({
    type: 'contextmatcher',
    configs: { contextKey: 'o', contextType: 'object', objectKeyPath: 'count', objectValue: '3' },
  });
  assert.equal(
    await fires(count, { context: { o: { type: 'object', value: { count: 3 } } } }, [{}]),
    true,
    'toString of a number',
  );

  await assert.rejects(
    task({ type: 'contextmatcher', configs: { contextKey: 'k', contextType: 'array' } }),
    DeploymentError,
  );
  await assert.rejects(
    task({ type: 'contextmatcher', configs: { contextKey: 'k', contextType: 'object' } }),
    DeploymentError,
  );
});

test('dynamicvaluematcher: equals, contains (text and list), existence; missing value fails', async () => {
  const dynamic = (configs: Record<string, string>) => task({ type: 'dynamicvaluematcher', configs });
  const vienna: StepInput = { output: { input: 'Vienna', actions: ['a', 'b'] } };

  const equals = await dynamic({ valuePath: 'memory.current.input', equals: 'Vienna' });
  assert.equal(await fires(equals, vienna, [{}]), true);
  assert.equal(await fires(equals, { output: { input: 'Graz' } }, [{}]), false);
  assert.equal(await fires(equals, {}, [{}]), false, 'no value');

  const containsText = await dynamic({ valuePath: 'memory.current.input', contains: 'enn' });
  assert.equal(await fires(containsText, vienna, [{}]), true);
  assert.equal(await fires(containsText, { output: { input: 'Graz' } }, [{}]), false);
  const containsList = await dynamic({ valuePath: 'memory.current.actions', contains: 'b' });
  assert.equal(await fires(containsList, vienna, [{}]), true);
  assert.equal(await fires(await dynamic({ valuePath: 'memory.current.actions', contains: 'c' }), vienna, [{}]), false);
  assert.equal(
    await fires(await dynamic({ valuePath: 'memory.current.actions', equals: '[a, b]' }), vienna, [{}]),
    true,
    'a list as text',
  );
  assert.equal(
    await fires(await dynamic({ valuePath: 'memory.current.input', equals: 'Graz', contains: 'Vie' }), vienna, [{}]),
    true,
    'contains after equals',
  );

  const exists = await dynamic({ valuePath: 'context.flags.vip' });
  assert.equal(await fires(exists, { context: { flags: { type: 'object', value: { vip: true } } } }, [{}]), true);
  assert.equal(
    await fires(exists, { context: { flags: { type: 'object', value: { vip: false } } } }, [{}]),
    false,
    'a boolean is its own answer',
  );
  assert.equal(await fires(exists, { context: { flags: { type: 'object', value: { vip: 'no' } } } }, [{}]), true);
  assert.equal(await fires(exists, { context: { flags: { type: 'object', value: {} } } }, [{}]), false);
  assert.equal(
    await fires(await dynamic({ valuePath: 'memory.last.actions[0]', equals: 'ask_for_city' }), {}, [
      {},
      { output: { actions: ['ask_for_city'] } },
    ]),
    true,
  );
  assert.equal(await fires(await dynamic({ valuePath: 'userInfo.userId', equals: 'u' }), {}, [{}]), true);
  assert.equal(await fires(await dynamic({ equals: 'x' }), {}, [{}]), false, 'no valuePath');
  await assert.rejects(dynamic({ valuePath: 'a..b' }), DeploymentError);
});

test('sizematcher: lists, maps, numbers, integer text, other text; -1 unset; all unset fails', async () => {
  const size = (configs: Record<string, string>) =>
    task({ type: 'sizematcher', configs: { valuePath: 'context.v', ...configs } });
  const value = (v: unknown): StepInput => ({ context: { v: { type: 'object', value: v as object } } });
  const text = (v: string): StepInput => ({ context: { v: { type: 'string', value: v } } });
  const two = await size({ min: '2', max: '3' });
  assert.equal(await fires(two, value([1, 2]), [{}]), true);
  assert.equal(await fires(two, value([1]), [{}]), false);
  assert.equal(await fires(two, value([1, 2, 3, 4]), [{}]), false);
  assert.equal(await fires(two, value({ a: 1, b: 2, c: 3 }), [{}]), true, 'map');
  assert.equal(await fires(two, text('abc'), [{}]), true, 'text length');
  assert.equal(await fires(two, text('12345'), [{}]), false, 'integer text is its number');
  assert.equal(await fires(await size({ equal: '12345' }), text('12345'), [{}]), true);
  assert.equal(await fires(await size({ equal: '0' }), {}, [{}]), true, 'missing is 0');
  assert.equal(await fires(await size({ min: '1', max: '-1', equal: '-1' }), {}, [{}]), false);
  assert.equal(await fires(await size({ min: '-1', max: '-1', equal: '-1' }), value([1]), [{}]), false, 'all unset');
  assert.equal(await fires(await size({}), value([1]), [{}]), false, 'all unset by absence');
  const count = await task({ type: 'sizematcher', configs: { valuePath: 'properties.count', min: '3' } });
  assert.equal(await fires(count, {}, [{}]), false, 'no such property');
  const dialogue = new Dialogue();
  dialogue.properties = { count: { name: 'count', value: 3, scope: 'conversation' } };
  assert.equal(successOf(await dialogue.say(count)), true, 'a number is its own size');
  dialogue.properties = { count: { name: 'count', value: 2.5, scope: 'conversation' } };
  assert.equal(successOf(await dialogue.say(count)), false);
  assert.equal(sizeOf(7), 7);
  assert.equal(sizeOf(new Map()), 0);
  assert.equal(sizeOf(true), 4);
  await assert.rejects(size({ min: 'two' }), DeploymentError);
});

test('dependency: evaluates the referenced rule; unknown rule and cycles are deployment errors', async () => {
  const set = (second: BehaviorConditionDefinition[]) => ({
    behaviorGroups: [
      { name: 'Hidden', behaviorRules: [{ name: 'Base', actions: ['base'], conditions: [input('greeting(*)')] }] },
      { name: 'G', behaviorRules: [{ name: 'R', actions: ['hit'], conditions: second }] },
    ],
  });
  const depends = await compileSet(set([{ type: 'dependency', configs: { reference: 'Base' } }, action('x')]));
  assert.equal(await fires(depends, { expressions: 'greeting(hi)', actions: ['x'] }, [{}]), true);
  assert.equal(await fires(depends, { expressions: 'greeting(hi)' }, [{}]), false);
  assert.equal(await fires(depends, { expressions: 'other', actions: ['x'] }, [{}]), false);

  const chain = await compileSet({
    behaviorGroups: [
      {
        executionStrategy: 'executeAll',
        behaviorRules: [
          { name: 'R', actions: ['hit'], conditions: [{ type: 'dependency', configs: { reference: 'B' } }] },
          { name: 'B', actions: [], conditions: [{ type: 'dependency', configs: { reference: 'C' } }] },
          { name: 'C', actions: [], conditions: [input('c')] },
        ],
      },
    ],
  });
  assert.equal(await fires(chain, { expressions: 'c' }, [{}]), true);
  assert.equal(await fires(chain, { expressions: 'd' }, [{}]), false);

  const cycle = {
    behaviorGroups: [
      {
        behaviorRules: [
          { name: 'A', actions: ['a'], conditions: [{ type: 'dependency', configs: { reference: 'B' } }] },
          {
            name: 'B',
            actions: ['b'],
            conditions: [{ type: 'negation', conditions: [{ type: 'dependency', configs: { reference: 'A' } }] }],
          },
        ],
      },
    ],
  };
  await assert.rejects(
    compileSet(cycle),
    (error: unknown) => error instanceof DeploymentError && /cycle: 'A' -> 'B' -> 'A'/.test(error.message),
  );
  await assert.rejects(
    compileSet(oneRule({ type: 'dependency', configs: { reference: 'R' } })),
    DeploymentError,
    'itself',
  );
  await assert.rejects(compileSet(oneRule({ type: 'dependency', configs: { reference: 'Nobody' } })), DeploymentError);
});

test('unknown condition types are deployment errors; textOf prints like upstream', async () => {
  await assert.rejects(task({ type: 'capabilityMatch' }), DeploymentError);
  assert.equal(textOf(['a', 1, { b: true }]), '[a, 1, {b=true}]');
  assert.equal(textOf(3.5), '3.5');
});
