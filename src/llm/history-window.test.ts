import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredStep } from '../runtime/memory.ts';
import { historyWindow, rollingSummary, type RollingSummary } from './history-window.ts';

const KEY = 'langchain:summary:openai:chat';

function step(input: string, answer: string, summary?: RollingSummary): StoredStep {
  return {
    entries: summary === undefined ? [] : [{ key: KEY, value: summary, timestamp: 0, public: false }],
    output: { input, output: [answer] },
    timestamp: 0,
    properties: {},
  };
}

/** A budget of 30 estimated tokens, 6 of them taken by the system message and the input. */
const budget = { historyLimit: -1, maxContextTokens: 30, anchorFirstSteps: 2, fixedTokens: 6 };

/** Ten steps of 10 + 10 characters: 3 + 3 estimated tokens each. */
const steps = Array.from({ length: 10 }, (_, i) => step(`question ${i}`, `answer  ${i}.`));

describe('history window', () => {
  it('without a token budget keeps the step window', () => {
    const window = historyWindow(steps, { historyLimit: 3, maxContextTokens: -1, anchorFirstSteps: 2, fixedTokens: 0 });
    assert.deepEqual(window.steps, steps.slice(7));
    assert.equal(window.firstRecent, 7);
  });

  it('with a budget keeps the anchors, then the newest steps that fit', () => {
    const window = historyWindow(steps, {
      historyLimit: -1,
      maxContextTokens: 30,
      anchorFirstSteps: 2,
      fixedTokens: 6,
    });
    // 24 tokens left: two anchors (12) and the two newest steps (12).
    assert.deepEqual(window.steps, [steps[0], steps[1], steps[8], steps[9]]);
    assert.equal(window.firstRecent, 8);
    assert.equal(window.anchors, 2);
  });

  it('never sends a step twice when the budget covers everything', () => {
    const window = historyWindow(steps, {
      historyLimit: -1,
      maxContextTokens: 1000,
      anchorFirstSteps: 2,
      fixedTokens: 0,
    });
    assert.deepEqual(window.steps, steps);
  });
});

describe('rolling summary', () => {
  it('summarizes the dropped steps between the anchors and the window', () => {
    const window = historyWindow(steps, {
      historyLimit: -1,
      maxContextTokens: 30,
      anchorFirstSteps: 2,
      fixedTokens: 6,
    });
    const summary = rollingSummary(steps, window, KEY)!;
    assert.equal(summary.throughStep, 7);
    assert.match(summary.text, /User: question 2\./);
    assert.doesNotMatch(summary.text, /question 1\b|question 8/);
  });

  it('builds on the summary an earlier step left and reads only the steps dropped since', () => {
    const earlier = { text: 'User: earlier facts.', throughStep: 6 };
    const withSummary = [...steps.slice(0, 9), step('question 9', 'answer  9.', earlier)];
    const window = historyWindow(withSummary, budget);
    const summary = rollingSummary(withSummary, window, KEY)!;
    assert.equal(summary.throughStep, 7);
    assert.match(summary.text, /^User: earlier facts\. User: question 7\. Assistant: answer 7\.$/);
  });

  it('is the earlier summary itself when no further step was dropped, and none when nothing was dropped', () => {
    const earlier = { text: 'User: earlier facts.', throughStep: 7 };
    const withSummary = [...steps.slice(0, 9), step('question 9', 'answer  9.', earlier)];
    const window = historyWindow(withSummary, budget);
    assert.equal(rollingSummary(withSummary, window, KEY), earlier);
    const all = historyWindow(steps, { historyLimit: -1, maxContextTokens: -1, anchorFirstSteps: 2, fixedTokens: 0 });
    assert.equal(rollingSummary(steps, all, KEY), undefined);
  });
});
