import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyTallies } from '../../runtime/memory.ts';
import type { Turn } from '../../runtime/turn.ts';
import { createOutputTask } from './output-task.ts';
import { compileStep } from '../../../test/support/tasks.ts';
import { testTurn } from '../../../test/support/turns.ts';

const outputSet = {
  outputSet: [
    {
      action: 'greet',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hi!' }] }],
      quickReplies: [{ value: 'Bye', expressions: 'goodbye(bye)' }],
    },
    {
      action: 'greet',
      timesOccurred: 1,
      outputs: [{ valueAlternatives: ['Hi again!'] }, { valueAlternatives: [{ type: 'image', uri: 'wave.png' }] }],
    },
    {
      action: 'later',
      timesOccurred: 2,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Only from the third time', delay: 500 }] }],
    },
    {
      action: 'choose',
      outputs: [{ valueAlternatives: [{ type: 'quickReply', value: 'Yes', expressions: 'yes' }, 'Never chosen'] }],
    },
  ],
};

function turnWith(actions: string[], previous: Record<string, number> = {}, language?: string): Turn {
  const turn = testTurn({
    tallies: { ...emptyTallies, actions: previous },
    properties: language ? { lang: { name: 'lang', value: language, scope: 'longTerm' } } : {},
  });
  turn.setActions(actions);
  return turn;
}

const compile = async (set: object = outputSet) =>
  compileStep(
    createOutputTask(() => 0),
    { config: { uri: 'svc://ai.svc.output/outputstore/outputsets/0123456789abcdef01234567?version=1' } },
    async () => set,
  );

test('the entry for the occurrence count is chosen; past the last entry the highest one repeats', async () => {
  const task = await compile();
  const first = turnWith(['greet']);
  await task.execute(first);
  assert.deepEqual(first.output.output, [{ type: 'text', text: 'Hi!', delay: 0 }]);
  assert.deepEqual(first.get('quickReplies:greet'), [{ value: 'Bye', expressions: 'goodbye(bye)' }]);

  for (const times of [1, 5]) {
    const again = turnWith(['greet'], { greet: times });
    await task.execute(again);
    assert.deepEqual(again.output.output, [
      { type: 'text', text: 'Hi again!', delay: 0 },
      { type: 'image', uri: 'wave.png' },
    ]);
    assert.deepEqual(again.get('output:text:greet:0'), { type: 'text', text: 'Hi again!', delay: 0 });
    assert.deepEqual(again.get('output:image:greet:1'), { type: 'image', uri: 'wave.png' });
    assert.equal(again.get('quickReplies:greet'), undefined);
  }

  const early = turnWith(['later']);
  await task.execute(early);
  assert.deepEqual(
    early.output.output,
    [{ type: 'text', text: 'Only from the third time', delay: 500 }],
    'entries {2} only: the first occurrence uses 2',
  );
});

test('outputs follow the action order; actions without entries produce nothing; a quickReply alternative becomes a quick reply', async () => {
  const task = await compile();
  const turn = turnWith(['unknown', 'choose', 'greet']);
  await task.execute(turn);
  assert.deepEqual(turn.output.output, [{ type: 'text', text: 'Hi!', delay: 0 }]);
  assert.deepEqual(turn.output.quickReplies, [
    { value: 'Yes', expressions: 'yes' },
    { value: 'Bye', expressions: 'goodbye(bye)' },
  ]);
});

test('an output set with a language speaks only in a conversation of that language (English without lang)', async () => {
  const task = await compile({ ...outputSet, language: 'en' });
  const german = turnWith(['greet'], {}, 'de');
  await task.execute(german);
  assert.equal(german.output.output, undefined);
  const english = turnWith(['greet'], {}, 'EN');
  await task.execute(english);
  assert.deepEqual(english.output.output, [{ type: 'text', text: 'Hi!', delay: 0 }]);
  const noLang = turnWith(['greet']);
  await task.execute(noLang);
  assert.deepEqual(noLang.output.output, [{ type: 'text', text: 'Hi!', delay: 0 }], 'no lang property: English');
  const germanSet = await compile({ ...outputSet, language: 'de' });
  const stillEnglish = turnWith(['greet']);
  await germanSet.execute(stillEnglish);
  assert.equal(stillEnglish.output.output, undefined);
});

test('outputs built by an earlier task from outside data are not templated again; client context outputs are', async () => {
  const { templatingTask } = await import('../templating/templating-task.ts');
  const output = await compileStep(
    createOutputTask(() => 0),
    {},
  );
  const templating = await compileStep(templatingTask, {});
  const turn = turnWith([]);
  turn.setProperty({ name: 'secret', value: 'hidden', scope: 'conversation' });
  turn.set('context:output_fromServer', {
    type: 'object',
    value: [{ valueAlternatives: ['Server says {properties.secret}'] }],
  });
  await output.execute(turn);
  await templating.execute(turn);
  assert.deepEqual(turn.output.output, [{ type: 'text', text: 'Server says {properties.secret}', delay: 0 }]);
});
