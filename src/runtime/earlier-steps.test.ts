import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompactStep } from './compact-step.ts';
import { EarlierSteps } from './earlier-steps.ts';
import type { StoredStep } from './memory.ts';

const stored = (index: number) =>
  JSON.stringify({ entries: [], output: { input: `message ${index}` }, timestamp: index, properties: {} });

/** A conversation of `count` steps whose latest `held` were read; the store's reads are recorded. */
function conversation(count: number, held: number) {
  const reads: Array<[number, number]> = [];
  let gone = false;
  const steps: StoredStep[] = [];
  const earlier = new EarlierSteps('c', steps, (from, to) => {
    reads.push([from, to]);
    return gone ? undefined : Array.from({ length: to - from }, (_, offset) => stored(from + offset));
  });
  steps.push(...earlier.notRead(count - held));
  for (let index = count - held; index < count; index++) steps.push(CompactStep.fromStored(stored(index), false));
  return { steps, earlier, reads, forget: () => (gone = true) };
}

const inputOf = (step: StoredStep | undefined) => step?.output.input;

describe('EarlierSteps', () => {
  it('reads a step not held together with those after it that are not held either, in one read', () => {
    const { steps, reads } = conversation(8, 2);
    assert.equal(inputOf(steps[7]), 'message 7');
    assert.deepEqual(reads, [], 'a held step reads nothing');
    assert.equal(inputOf(steps[2]), 'message 2');
    assert.deepEqual(reads, [[2, 6]]);
    assert.equal(steps[0]!.timestamp, 0);
    assert.deepEqual(
      reads,
      [
        [2, 6],
        [0, 2],
      ],
      'only those still not held',
    );
    assert.deepEqual(
      steps.map((step) => inputOf(step)),
      Array.from({ length: 8 }, (_, index) => `message ${index}`),
    );
    assert.equal(reads.length, 2);
  });

  it('lets go of the text of all but the latest steps; they are read again when asked for', () => {
    const { steps, earlier, reads } = conversation(8, 8);
    earlier.holdLatest(3);
    assert.deepEqual(
      steps.map((step) => (step as CompactStep).holdsText),
      [false, false, false, false, false, true, true, true],
    );
    assert.equal(inputOf(steps[4]), 'message 4');
    assert.deepEqual(reads, [[4, 5]]);
    steps.push(CompactStep.fromStored(stored(8), false));
    earlier.holdLatest(3);
    assert.deepEqual(
      steps.map((step) => (step as CompactStep).holdsText),
      [false, false, false, false, false, false, true, true, true],
      'each time the run of held steps ends at the first one that is not',
    );
  });

  it('reads a step taken off the conversation (undone) alone, and says so when the conversation is gone', () => {
    const { steps, reads, forget } = conversation(5, 1);
    steps.length = 3; // two undone
    const undone = conversation(5, 1); // the same conversation, its step 3 popped while not held
    const popped = undone.steps[3]!;
    undone.steps.length = 3;
    assert.equal(inputOf(popped), 'message 3');
    assert.deepEqual(undone.reads, [[3, 4]]);
    forget();
    assert.throws(() => steps[0]!.output, /no longer stored/);
    assert.deepEqual(reads, [[0, 3]]);
  });
});
