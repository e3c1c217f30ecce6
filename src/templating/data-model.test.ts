import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testTurn } from '../../test/support/turns.ts';
import { oldGenerationGrowthPer } from '../../test/support/young-generation.ts';
import type { StoredStep } from '../runtime/memory.ts';
import { TemplateData, templateData } from './data-model.ts';
import { renderTemplate } from './engine.ts';

const step = (output: Record<string, unknown>): StoredStep => ({ entries: [], output, timestamp: 0, properties: {} });
const steps = [step({ output: ['Welcome!'] }), step({ input: 'hi' }), step({ input: 'and?' })];

test('memory.past: the conversation outputs of steps 1 to the current one, read when a template reads them', () => {
  const turn = testTurn({ steps });
  turn.setOutput('input', 'now');
  const data = templateData(turn);
  const memory = data.memory as Record<string, unknown>;
  assert.deepEqual(memory.past, [{ input: 'hi' }, { input: 'and?' }, { input: 'now' }]);
  assert.deepEqual(Object.keys(memory), ['current', 'last', 'past']);
  assert.deepEqual(JSON.parse(JSON.stringify(memory)).past, memory.past);
  assert.equal(renderTemplate('{#for o in memory.past}{o.input};{/for}', data), 'hi;and?;now;');
  assert.deepEqual((templateData(testTurn()).memory as Record<string, unknown>).past, []);
});

test('memory.past and conversationLog still read the turn on copies of the data', () => {
  const turn = testTurn({ steps });
  turn.setOutput('input', 'now');
  const run = new TemplateData(turn);
  run.copy(['memory', 'current', 'copied'], 'x');
  const data = run.get();
  assert.equal((data.memory as Record<string, unknown>).current !== turn.output, true, 'memory was copied');
  assert.equal(renderTemplate('{memory.current.copied}{#for o in memory.past}/{o.input}{/for}', data), 'x/hi/and?/now');
  assert.equal(
    renderTemplate('{conversationLog.generate()}', run.with('item', 1)),
    'assistant: Welcome!\nuser: hi\nuser: and?\nuser: now',
  );
});

/**
 * V8 keeps a getter defined on an object in a record it allocates in the old generation. A getter made per turn (a
 * closure over the turn) was referenced from there, and young collections, which take every reference from the old
 * generation as live, kept each turn's data until the next full collection: every turn's objects were copied twice
 * and then promoted (issue 15). Measured here as the growth of the old generation over turns whose data nobody keeps.
 */
test('the template data of turns nobody keeps does not outlive young collections', async () => {
  const turns = 2_000;
  const grownPerTurn = await oldGenerationGrowthPer(turns, () => {
    for (let index = 0; index < turns; index++) {
      const turn = testTurn({ steps });
      turn.setOutput('input', `${index} ${'x'.repeat(4_000)}`);
      templateData(turn);
    }
  });
  assert.ok(grownPerTurn < 500, `the old generation grew by ${grownPerTurn.toFixed(0)} bytes a turn`);
});
