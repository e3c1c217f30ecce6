import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyTallies } from '../../runtime/memory.ts';
import { DeploymentError, TaskRegistry } from '../../runtime/tasks.ts';
import { behaviorTask } from './behavior-task.ts';
import { compileStep } from '../../../test/support/tasks.ts';
import { testTurn } from '../../../test/support/turns.ts';
import { compileSet, Dialogue, SET_URI, successes } from '../../../test/support/behavior.ts';

const when = (expressions: string) => [{ type: 'inputmatcher', configs: { expressions } }];

const groups = {
  behaviorGroups: [
    {
      name: 'First',
      behaviorRules: [
        { name: 'A', actions: ['a', 'shared'], conditions: when('x(*)') },
        { name: 'B', actions: ['b'], conditions: when('x(*)') },
        { name: 'C', actions: ['c'], conditions: when('y(*)') },
      ],
    },
    {
      name: 'All',
      executionStrategy: 'executeAll',
      behaviorRules: [
        { name: 'D', actions: ['shared', 'd'], conditions: when('x(*)') },
        { name: 'E', actions: ['e'], conditions: when('z(*)') },
        { name: 'F', actions: ['f'] },
      ],
    },
  ],
};

test('the task type, its alias, and a uri (config or extensions) being required', async () => {
  const task = behaviorTask;
  assert.equal(task.type, 'ai.svc.behavior');
  assert.deepEqual(task.aliases, ['ai.svc.rules']);
  assert.equal(new TaskRegistry([task]).get('ai.svc.rules'), task);
  const resolve = async () => groups;
  let fromExtensions: string | undefined;
  await compileStep(task, { config: {}, extensions: { uri: SET_URI } }, async (uri) => {
    fromExtensions = uri;
    return groups;
  });
  assert.equal(fromExtensions, SET_URI);
  await assert.rejects(async () => compileStep(task, { config: { uri: ' ' } }, resolve), DeploymentError);
  await assert.rejects(
    async () => compileStep(task, { config: { uri: SET_URI, surprise: true } }, resolve),
    /'surprise' at \$\.config\.surprise/,
  );
  let asked: [string, string] | undefined;
  await compileStep(task, { type: 'ai.svc.rules', config: { uri: SET_URI } }, async (uri, kind) => {
    asked = [uri, kind];
    return groups;
  });
  assert.deepEqual(asked, [SET_URI, 'behavior']);
  await assert.rejects(compileSet('not a set'), DeploymentError);
});

test('groups in order: first success stops a group, executeAll fires every match; actions de-duplicated; success and fail recorded', async () => {
  const task = await compileSet(groups);
  const dialogue = new Dialogue();
  dialogue.commit(dialogue.next());
  const turn = await dialogue.say(task, { expressions: 'x(1)' });
  assert.deepEqual(turn.actions, ['a', 'shared', 'd', 'f']);
  assert.deepEqual(turn.output.actions, ['a', 'shared', 'd', 'f']);
  assert.deepEqual(turn.get('behavior_rules:success'), ['A', 'D', 'F']);
  assert.deepEqual(turn.get('behavior_rules:fail'), ['E'], 'B and C were not evaluated');

  const other = await dialogue.say(task, { expressions: 'y(1), z(2)' });
  assert.deepEqual(other.actions, ['c', 'e', 'f']);
  assert.deepEqual(other.get('behavior_rules:success'), ['C', 'E', 'F']);
  assert.deepEqual(other.get('behavior_rules:fail'), ['A', 'B', 'D']);
});

test('a first-match group records the rules before the one that answers, turn after turn; the list cannot be changed', async () => {
  const task = await compileSet({
    behaviorGroups: [
      {
        behaviorRules: [
          { name: 'A', actions: ['a'], conditions: when('a(*)') },
          { name: 'B', actions: ['b'], conditions: when('b(*)') },
          { name: 'C', actions: ['c'], conditions: when('c(*)') },
        ],
      },
    ],
  });
  const dialogue = new Dialogue();
  dialogue.commit(dialogue.next());
  const failedFor = async (expressions: string) =>
    (await dialogue.say(task, { expressions })).get('behavior_rules:fail');
  assert.deepEqual(await failedFor('c(1)'), ['A', 'B']);
  assert.equal(await failedFor('a(1)'), undefined, 'nothing failed');
  assert.deepEqual(await failedFor('none(1)'), ['A', 'B', 'C']);
  assert.deepEqual(await failedFor('b(1)'), ['A']);
  const failed = (await failedFor('c(1)')) as string[];
  assert.deepEqual(failed, ['A', 'B']);
  assert.throws(() => failed.push('D'), TypeError, 'one list serves every turn: nobody may change it');
  assert.deepEqual(await failedFor('c(1)'), ['A', 'B']);
});

test('appendActions: appended by default, replaced when false, the workflow config overrides the set', async () => {
  const set = { behaviorGroups: [{ behaviorRules: [{ name: 'Welcome', actions: ['welcome'] }] }] };
  const start = async (task: Awaited<ReturnType<typeof compileSet>>) => (await new Dialogue().say(task)).actions;
  assert.deepEqual(await start(await compileSet(set)), ['CONVERSATION_START', 'welcome']);
  assert.deepEqual(await start(await compileSet({ ...set, appendActions: false })), ['welcome']);
  assert.deepEqual(
    await start(await compileSet({ ...set, appendActions: false }, { uri: SET_URI, appendActions: true })),
    ['CONVERSATION_START', 'welcome'],
  );
  assert.deepEqual(await start(await compileSet(set, { uri: SET_URI, appendActions: false })), ['welcome']);
  await assert.rejects(compileSet(set, { uri: SET_URI, appendActions: 'false' }), /\$\.config\.appendActions/);

  const again = await compileSet({
    behaviorGroups: [{ behaviorRules: [{ name: 'Again', actions: ['x', 'CONVERSATION_START'] }] }],
  });
  assert.deepEqual(await start(again), ['CONVERSATION_START', 'x'], 'de-duplicated with the existing actions');
});

test('no successful rule leaves the actions untouched (also with appendActions false)', async () => {
  const set = {
    behaviorGroups: [{ behaviorRules: [{ name: 'Never', actions: ['never'], conditions: when('nothing') }] }],
    appendActions: false,
  };
  const dialogue = new Dialogue();
  const turn = await dialogue.say(await compileSet(set));
  assert.deepEqual(turn.actions, ['CONVERSATION_START']);
  assert.equal(turn.get('behavior_rules:success'), undefined);
  assert.deepEqual(turn.get('behavior_rules:fail'), ['Never']);
  const later = await dialogue.say(await compileSet(set), { expressions: 'greeting(hi)' });
  assert.equal(later.has('actions'), false);
});

test('expressionsAsActions adds the names of the current expressions after the rules’ actions', async () => {
  const set = {
    behaviorGroups: [{ behaviorRules: [{ name: 'Greeting', actions: ['greet'], conditions: when('greeting(*)') }] }],
    expressionsAsActions: true,
  };
  const dialogue = new Dialogue();
  dialogue.commit(dialogue.next());
  const turn = await dialogue.say(await compileSet(set), {
    expressions: 'greeting(hello), unknown(Vienna), greeting(hi)',
  });
  assert.deepEqual(turn.actions, ['greet', 'greeting', 'unknown']);
  const alone = await dialogue.say(await compileSet(set), { expressions: 'shop.buy(apple)' });
  assert.deepEqual(alone.actions, ['buy'], 'names count even when no rule succeeded');
  const off = await dialogue.say(await compileSet(set, { uri: SET_URI, expressionsAsActions: false }), {
    expressions: 'greeting(hello), unknown(Vienna)',
  });
  assert.deepEqual(off.actions, ['greet']);
  const none = await dialogue.say(await compileSet(set));
  assert.equal(none.has('actions'), false);
});

test('a second rules task in the same step sees the first one’s actions and successes, and appends to them', async () => {
  const first = await compileSet({ behaviorGroups: [{ behaviorRules: [{ name: 'Welcome', actions: ['welcome'] }] }] });
  const second = await compileSet({
    behaviorGroups: [
      {
        behaviorRules: [
          {
            name: 'AfterWelcome',
            actions: ['after'],
            conditions: [
              { type: 'actionmatcher', configs: { actions: 'CONVERSATION_START, welcome' } },
              {
                type: 'occurrence',
                configs: { behaviorRuleName: 'Welcome', minTimesOccurred: '1', maxTimesOccurred: '1' },
              },
            ],
          },
        ],
      },
    ],
  });
  const dialogue = new Dialogue();
  const turn = dialogue.next();
  await first.execute(turn);
  await second.execute(turn);
  assert.deepEqual(turn.actions, ['CONVERSATION_START', 'welcome', 'after']);
  assert.deepEqual(turn.get('behavior_rules:success'), ['Welcome', 'AfterWelcome']);
  dialogue.commit(turn);
  assert.deepEqual(dialogue.tallies.rules, { Welcome: 1, AfterWelcome: 1 });
});

test('anyStep reads the tallies: earlier steps need not be walked for single expressions and actions', async () => {
  const set = {
    behaviorGroups: [
      {
        executionStrategy: 'executeAll',
        behaviorRules: [
          {
            name: 'SaidHello',
            actions: ['said_hello'],
            conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)', occurrence: 'anyStep' } }],
          },
          {
            name: 'NeverAsked',
            actions: ['never_asked'],
            conditions: [{ type: 'actionmatcher', configs: { actions: 'ask', occurrence: 'never' } }],
          },
        ],
      },
    ],
  };
  const task = await compileSet(set);
  const turn = testTurn({
    tallies: { ...emptyTallies, expressions: { 'greeting(hello)': 1, 'unknown(x)': 2 }, actions: { ask: 1 } },
  });
  await task.execute(turn);
  assert.deepEqual(turn.get('behavior_rules:success'), ['SaidHello']);
});

// ---------------------------------------------------------------------------------------------------------------
// Appendix C.1 and C.2, end to end at the task level
// ---------------------------------------------------------------------------------------------------------------

const userInfo = (username: string) => ({ userInfo: { type: 'object' as const, value: { username } } });

test('Appendix C.1: the basic agent’s rules', async () => {
  const set = {
    behaviorGroups: [
      {
        name: 'Smalltalk',
        behaviorRules: [
          {
            name: 'Welcome',
            actions: ['welcome'],
            conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
          },
          {
            name: 'Personal_Greeting',
            actions: ['greet_personally'],
            conditions: [
              { type: 'inputmatcher', configs: { expressions: 'greeting(*)' } },
              {
                type: 'contextmatcher',
                configs: { contextKey: 'userInfo', contextType: 'object', objectKeyPath: 'username' },
              },
            ],
          },
          { name: 'Greeting', actions: ['greet'], conditions: when('greeting(*)') },
          { name: 'Goodbye', actions: ['say_goodbye', 'CONVERSATION_END'], conditions: when('goodbye(*)') },
          { name: 'Multiple_Choice', actions: ['giving_two_options'], conditions: when('two_options_question(*)') },
        ],
      },
      {
        name: 'ContextStuff',
        behaviorRules: [
          {
            name: 'ContextString',
            actions: ['context_string'],
            conditions: [
              {
                type: 'contextmatcher',
                configs: { contextKey: 'someContextKeyString', contextType: 'string', string: 'someContextValue' },
              },
            ],
          },
          {
            name: 'ContextExpressions',
            actions: ['context_expressions'],
            conditions: [
              {
                type: 'contextmatcher',
                configs: {
                  contextKey: 'someContextKeyExpressions',
                  contextType: 'expressions',
                  expressions: 'expression(someValue)',
                },
              },
            ],
          },
          {
            name: 'ContextObject',
            actions: ['context_object'],
            conditions: [
              {
                type: 'contextmatcher',
                configs: {
                  contextKey: 'userInfo',
                  contextType: 'object',
                  objectKeyPath: 'username',
                  objectValue: 'John',
                },
              },
            ],
          },
        ],
      },
    ],
  };
  const task = await compileSet(set);
  const dialogue = new Dialogue();

  const start = await dialogue.say(task);
  assert.deepEqual(start.actions, ['CONVERSATION_START', 'welcome']);
  assert.deepEqual(start.get('behavior_rules:success'), ['Welcome']);

  assert.deepEqual((await dialogue.say(task, { expressions: 'greeting(hello)' })).actions, ['greet']);
  assert.deepEqual(
    (await dialogue.say(task, { expressions: 'greeting(hello)' })).actions,
    ['greet'],
    'Welcome never again',
  );
  assert.deepEqual((await dialogue.say(task, { expressions: 'two_options_question(question)' })).actions, [
    'giving_two_options',
  ]);

  const withString = await dialogue.say(task, {
    expressions: 'greeting(hello)',
    context: { someContextKeyString: { type: 'string', value: 'someContextValue' } },
  });
  assert.deepEqual(withString.actions, ['greet', 'context_string']);
  const withExpressions = await dialogue.say(task, {
    expressions: 'greeting(hello)',
    context: {
      someContextKeyExpressions: { type: 'expressions', value: 'expression(someValue), expression2(someOtherValue)' },
    },
  });
  assert.deepEqual(withExpressions.actions, ['greet', 'context_expressions']);

  const personal = await dialogue.say(task, { expressions: 'greeting(hello)', context: userInfo('John') });
  assert.deepEqual(personal.actions, ['greet_personally', 'context_object'], 'first match: greet does not fire');
  assert.deepEqual(personal.get('behavior_rules:success'), ['Personal_Greeting', 'ContextObject']);
  assert.deepEqual(personal.get('behavior_rules:fail'), ['Welcome', 'ContextString', 'ContextExpressions']);

  const other = await dialogue.say(task, { expressions: 'greeting(hello)', context: userInfo('Jane') });
  assert.deepEqual(other.actions, ['greet_personally']);

  assert.deepEqual((await dialogue.say(task, { expressions: 'goodbye(bye)' })).actions, [
    'say_goodbye',
    'CONVERSATION_END',
  ]);
  assert.equal((await dialogue.say(task, { expressions: 'unknown(Vienna)' })).has('actions'), false);
  assert.deepEqual(dialogue.tallies.rules, {
    Welcome: 1,
    Greeting: 4,
    Multiple_Choice: 1,
    ContextString: 1,
    ContextExpressions: 1,
    Personal_Greeting: 2,
    ContextObject: 1,
    Goodbye: 1,
  });
});

test('Appendix C.2: complex rules (connector, negation of occurrence)', async () => {
  const set = {
    behaviorGroups: [
      {
        name: 'WelcomeGroup',
        behaviorRules: [
          {
            name: 'Welcome',
            actions: ['welcome'],
            conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
          },
        ],
      },
      {
        name: 'ComplexRulesGroup',
        behaviorRules: [
          {
            name: 'FullGreeting',
            actions: ['full_greeting'],
            conditions: [
              {
                type: 'connector',
                configs: { operator: 'AND' },
                conditions: [
                  { type: 'inputmatcher', configs: { expressions: 'greeting(*)' } },
                  {
                    type: 'contextmatcher',
                    configs: { contextKey: 'userInfo', contextType: 'object', objectKeyPath: 'username' },
                  },
                ],
              },
            ],
          },
          { name: 'Greeting', actions: ['greet'], conditions: when('greeting(*)') },
          {
            name: 'NotGreetedYet',
            actions: ['not_greeted'],
            conditions: [
              {
                type: 'negation',
                conditions: [{ type: 'occurrence', configs: { behaviorRuleName: 'Greeting', minTimesOccurred: '1' } }],
              },
              { type: 'inputmatcher', configs: { expressions: 'status_check(*)' } },
            ],
          },
        ],
      },
    ],
  };
  const task = await compileSet(set);
  const conversation = async () => {
    const dialogue = new Dialogue();
    assert.deepEqual((await dialogue.say(task)).actions, ['CONVERSATION_START', 'welcome']);
    return dialogue;
  };

  const checkFirst = await conversation();
  assert.ok((await checkFirst.say(task, { expressions: 'status_check(check)' })).actions.includes('not_greeted'));

  const helloThenCheck = await conversation();
  assert.deepEqual((await helloThenCheck.say(task, { expressions: 'greeting(hello)' })).actions, ['greet']);
  const checked = await helloThenCheck.say(task, { expressions: 'status_check(check)' });
  assert.ok(!checked.actions.includes('not_greeted'));
  assert.deepEqual(successes(checked), []);

  const withContext = await conversation();
  const full = await withContext.say(task, { expressions: 'greeting(hello)', context: userInfo('TestUser') });
  assert.ok(full.actions.includes('full_greeting'));
  assert.ok(!full.actions.includes('greet'));

  const without = await conversation();
  const plain = await without.say(task, { expressions: 'greeting(hello)' });
  assert.ok(plain.actions.includes('greet'));
  assert.ok(!plain.actions.includes('full_greeting'));
});
