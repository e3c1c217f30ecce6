import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Property } from '../../runtime/memory.ts';
import type { Turn } from '../../runtime/turn.ts';
import { createOutputTask } from '../output/output-task.ts';
import { templatingTask, TEMPLATING_ERRORS_KEY } from './templating-task.ts';
import { compileStep } from '../../../test/support/tasks.ts';
import { testTurn } from '../../../test/support/turns.ts';

const outputSet = {
  outputSet: [
    {
      action: 'greet',
      outputs: [
        { valueAlternatives: ['Hello {properties.name}, you said "{memory.current.input}".'] },
        { valueAlternatives: ['No template here {"a": 1}'] },
        {
          valueAlternatives: [
            { type: 'image', uri: 'https://img/{properties.city.toLowerCase}.png', alt: 'A view of {properties.city}' },
          ],
        },
        {
          valueAlternatives: [
            {
              type: 'buttons',
              label: 'Pick',
              buttons: [{ label: '{context.userInfo.name}', value: 'b1' }, { label: 'static' }],
            },
          ],
        },
      ],
      quickReplies: [
        { value: 'Weather in {properties.city}', expressions: 'property(city({properties.city.toLowerCase}))' },
        { value: 'Bye', expressions: 'goodbye(bye)' },
      ],
    },
    {
      action: 'plain',
      outputs: [{ valueAlternatives: ['Nothing to render'] }],
      quickReplies: [{ value: 'Ok', expressions: 'ok' }],
    },
    {
      action: 'broken',
      outputs: [
        {
          valueAlternatives: [{ type: 'text', text: 'Broken {#if properties.name}', title: 'Fine {properties.name}' }],
        },
      ],
    },
    {
      action: 'later',
      outputs: [{ valueAlternatives: ['Second: {properties.name}'] }],
      quickReplies: [{ value: '{properties.name}!', expressions: 'x' }],
    },
  ],
};

const resolve = async () => outputSet;

function turnWith(actions: string[], properties: Record<string, unknown> = { name: 'Anna', city: 'Vienna' }): Turn {
  const props: Record<string, Property> = {};
  for (const [name, value] of Object.entries(properties)) props[name] = { name, value, scope: 'conversation' };
  const turn = testTurn({
    properties: props,
    input: 'hi there',
    context: { userInfo: { type: 'object', value: { name: 'Ann Smith' } } },
  });
  turn.setOutput('input', 'hi there');
  turn.setActions(actions);
  return turn;
}

async function runTasks(turn: Turn): Promise<void> {
  const output = await compileStep(
    createOutputTask(() => 0),
    { config: { uri: 'svc://ai.svc.output/outputstore/outputsets/0123456789abcdef01234567?version=1' } },
    resolve,
  );
  await output.execute(turn);
  const templating = await compileStep(templatingTask, {});
  await templating.execute(turn);
}

const keys = (turn: Turn) => turn.entriesWithPrefix('').map((entry) => entry.key);

test('the task has the templating type and compiles without configuration', async () => {
  assert.equal(templatingTask.type, 'ai.svc.templating');
  const compiled = await compileStep(templatingTask, {});
  assert.equal(compiled.type, 'ai.svc.templating');
});

test('output items are templated: key keeps its position, pre/post copies follow, the output list is replaced in place', async () => {
  const turn = turnWith(['greet']);
  await runTasks(turn);

  const greeting = { type: 'text', text: 'Hello Anna, you said "hi there".', delay: 0 };
  const untouched = { type: 'text', text: 'No template here {"a": 1}', delay: 0 };
  const image = { type: 'image', uri: 'https://img/vienna.png', alt: 'A view of Vienna' };
  const buttons = {
    type: 'buttons',
    label: 'Pick',
    buttons: [{ label: 'Ann Smith', value: 'b1' }, { label: 'static' }],
  };

  assert.deepEqual(keys(turn), [
    'actions',
    'output:text:greet:0',
    'output:text:greet:1',
    'output:image:greet:2',
    'output:buttons:greet:3',
    'quickReplies:greet',
    'output:text:greet:0:preTemplated',
    'output:text:greet:0:postTemplated',
    'output:image:greet:2:preTemplated',
    'output:image:greet:2:postTemplated',
    'output:buttons:greet:3:preTemplated',
    'output:buttons:greet:3:postTemplated',
    'quickReplies:greet:preTemplated',
    'quickReplies:greet:postTemplated',
  ]);
  assert.deepEqual(turn.get('output:text:greet:0'), greeting);
  assert.deepEqual(turn.get('output:text:greet:0:preTemplated'), {
    type: 'text',
    text: 'Hello {properties.name}, you said "{memory.current.input}".',
    delay: 0,
  });
  assert.deepEqual(turn.get('output:text:greet:0:postTemplated'), greeting);
  assert.deepEqual(turn.get('output:text:greet:1'), untouched);
  assert.deepEqual(turn.get('output:image:greet:2'), image);
  assert.deepEqual(
    turn.get('output:image:greet:2:preTemplated'),
    outputSet.outputSet[0]!.outputs[2]!.valueAlternatives[0],
  );
  assert.deepEqual(turn.get('output:buttons:greet:3'), buttons);

  const entries = turn.entriesWithPrefix('');
  assert.equal(
    entries.find((entry) => entry.key === 'output:text:greet:0')!.public,
    true,
    'the templated item stays public',
  );
  assert.equal(entries.find((entry) => entry.key === 'output:text:greet:0:preTemplated')!.public, false);
  assert.equal(entries.find((entry) => entry.key === 'quickReplies:greet:postTemplated')!.public, false);

  const list = turn.output.output as unknown[];
  assert.deepEqual(list, [greeting, untouched, image, buttons]);
  assert.equal(list[0], turn.get('output:text:greet:0'), 'the output list holds the templated item itself');
  assert.equal(list[1], turn.get('output:text:greet:1'), 'an item with nothing to render is left as it is');
  assert.equal(turn.get(TEMPLATING_ERRORS_KEY), undefined);
});

test('quick replies are templated in the step data and in the conversation output', async () => {
  const turn = turnWith(['greet']);
  await runTasks(turn);
  const templated = [
    { value: 'Weather in Vienna', expressions: 'property(city(vienna))' },
    { value: 'Bye', expressions: 'goodbye(bye)' },
  ];
  assert.deepEqual(turn.get('quickReplies:greet'), templated);
  assert.deepEqual(turn.get('quickReplies:greet:preTemplated'), outputSet.outputSet[0]!.quickReplies);
  assert.deepEqual(turn.get('quickReplies:greet:postTemplated'), templated);
  assert.deepEqual(
    turn.output.quickReplies,
    templated,
    'our decision: the client and the next turn see templated values',
  );
});

test('nothing to render: no copies, no changes, the same objects', async () => {
  const turn = turnWith(['plain']);
  await runTasks(turn);
  assert.deepEqual(keys(turn), ['actions', 'output:text:plain', 'quickReplies:plain']);
  assert.deepEqual(turn.output.output, [{ type: 'text', text: 'Nothing to render', delay: 0 }]);
  assert.equal((turn.output.output as unknown[])[0], turn.get('output:text:plain'));
  assert.deepEqual(turn.output.quickReplies, [{ value: 'Ok', expressions: 'ok' }]);
  assert.equal(turn.get(TEMPLATING_ERRORS_KEY), undefined);
});

test('items across several actions keep their order; missing values render empty', async () => {
  const turn = turnWith(['plain', 'greet', 'later'], { city: 'Graz' });
  await runTasks(turn);
  const texts = (turn.output.output as Array<Record<string, unknown>>).map(
    (item) => item.text ?? item.uri ?? item.label,
  );
  assert.deepEqual(texts, [
    'Nothing to render',
    'Hello , you said "hi there".',
    'No template here {"a": 1}',
    'https://img/graz.png',
    'Pick',
    'Second: ',
  ]);
  assert.deepEqual(turn.output.quickReplies, [
    { value: 'Ok', expressions: 'ok' },
    { value: 'Weather in Graz', expressions: 'property(city(graz))' },
    { value: 'Bye', expressions: 'goodbye(bye)' },
    { value: '!', expressions: 'x' },
  ]);
});

test('a field whose template fails becomes empty text, the problem is recorded, the rest is templated', async () => {
  const turn = turnWith(['broken', 'later']);
  await runTasks(turn);
  assert.deepEqual(turn.get('output:text:broken'), { type: 'text', text: '', title: 'Fine Anna', delay: 0 });
  assert.deepEqual(turn.get('output:text:later'), { type: 'text', text: 'Second: Anna', delay: 0 });
  assert.deepEqual(turn.output.output, [
    { type: 'text', text: '', title: 'Fine Anna', delay: 0 },
    { type: 'text', text: 'Second: Anna', delay: 0 },
  ]);
  const errors = turn.get(TEMPLATING_ERRORS_KEY) as Array<{ key: string; field: string; message: string }>;
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.key, 'output:text:broken');
  assert.equal(errors[0]!.field, 'text');
  assert.match(errors[0]!.message, /unclosed section '\{#if\}'.*line 1, column 8/);
});

test('the LLM raw answer (a string under output:text:langchain:*) is not re-templated', async () => {
  const turn = turnWith([]);
  turn.set('output:text:langchain:openai', 'Use {properties.name} literally', true);
  const item = { type: 'text', text: 'Use {properties.name} literally' };
  turn.appendOutput('output', item);
  await runTasks(turn);
  assert.equal(turn.get('output:text:langchain:openai'), 'Use {properties.name} literally');
  assert.equal((turn.output.output as unknown[])[0], item);
  assert.deepEqual(keys(turn), ['actions', 'output:text:langchain:openai']);
});

test('a second templating task in the same turn does not render templated text again', async () => {
  const turn = turnWith(['later'], { name: '{properties.secret}', secret: 'TOP SECRET' });
  await runTasks(turn);
  assert.equal((turn.get('output:text:later') as { text: string }).text, 'Second: {properties.secret}');
  const again = await compileStep(templatingTask, {});
  await again.execute(turn);
  assert.equal((turn.get('output:text:later') as { text: string }).text, 'Second: {properties.secret}');
  assert.deepEqual(turn.get('quickReplies:later'), [{ value: '{properties.secret}!', expressions: 'x' }]);
  assert.deepEqual(turn.output.output, [{ type: 'text', text: 'Second: {properties.secret}', delay: 0 }]);
});

test('an item that reached the output list as a copy is matched by value', async () => {
  const turn = turnWith([]);
  turn.set('output:text:x', { type: 'text', text: 'Hi {properties.name}' }, true);
  turn.appendOutput('output', { type: 'text', text: 'other' }, { type: 'text', text: 'Hi {properties.name}' });
  await runTasks(turn);
  assert.deepEqual(turn.output.output, [
    { type: 'text', text: 'other' },
    { type: 'text', text: 'Hi Anna' },
  ]);
});
