import type { StoredStep } from '../runtime/memory.ts';
import { outputTexts } from '../runtime/snapshot.ts';
import { summarize } from './text-summarizer.ts';

/**
 * Which previous steps an LLM task sends, bounded by tokens as well as by steps: with `maxContextTokens` set, the
 * conversation's first `anchorFirstSteps` steps (the welcome and the opening request) are kept, then the newest
 * steps as long as the estimated tokens of everything sent (system message, current input, kept steps) stay within
 * the budget. With `summarizeHistory` the steps that fell out of the window are condensed into a rolling summary:
 * the summary the task left on an earlier step plus the steps dropped since, shortened again (extractive, no model
 * call), so a turn reads only the steps dropped since the last summary.
 */

export interface WindowOptions {
  /** Previous steps sent at most; -1 = all. */
  readonly historyLimit: number;
  /** Estimated-token budget of the request; -1 = unbounded. */
  readonly maxContextTokens: number;
  readonly anchorFirstSteps: number;
  /** Tokens the request needs besides the history (system message, current input). */
  readonly fixedTokens: number;
}

export interface HistoryWindow {
  /** The steps sent, oldest first. */
  readonly steps: readonly StoredStep[];
  /** Index (in the previous steps) of the oldest step sent after the anchors; earlier ones beyond the anchors are dropped. */
  readonly firstRecent: number;
  readonly anchors: number;
}

/** A rolling summary as a task leaves it in its step: its text and the index of the last step it covers. */
export interface RollingSummary {
  readonly text: string;
  readonly throughStep: number;
}

export const SUMMARY_SENTENCES = 8;

/** About four characters per token: the usual estimate for English text across providers' tokenizers. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The non-blank texts a step answered with. */
export function answerTexts(step: StoredStep): string[] {
  return outputTexts(step.output.output).filter((text) => text.trim() !== '');
}

function stepTokens(step: StoredStep): number {
  const input = step.output.input;
  return (typeof input === 'string' ? estimateTokens(input) : 0) + estimateTokens(answerTexts(step).join('\n'));
}

export function historyWindow(steps: readonly StoredStep[], options: WindowOptions): HistoryWindow {
  const stepLimited =
    options.historyLimit < 0 ? 0 : options.historyLimit === 0 ? steps.length : steps.length - options.historyLimit;
  const windowStart = Math.max(0, stepLimited);
  if (options.maxContextTokens < 0) return { steps: steps.slice(windowStart), firstRecent: windowStart, anchors: 0 };

  let budget = options.maxContextTokens - options.fixedTokens;
  const anchors: StoredStep[] = [];
  for (const step of steps.slice(0, Math.min(options.anchorFirstSteps, steps.length))) {
    const cost = stepTokens(step);
    if (cost > budget) break;
    anchors.push(step);
    budget -= cost;
  }
  let firstRecent = steps.length;
  while (firstRecent > Math.max(windowStart, anchors.length)) {
    const cost = stepTokens(steps[firstRecent - 1]!);
    if (cost > budget) break;
    budget -= cost;
    firstRecent--;
  }
  return { steps: [...anchors, ...steps.slice(firstRecent)], firstRecent, anchors: anchors.length };
}

/** The text of one step for the summary: "User: …" and "Assistant: …" sentences. */
function stepText(step: StoredStep): string {
  const parts: string[] = [];
  const input = step.output.input;
  if (typeof input === 'string' && input.trim() !== '') parts.push(sentence(`User: ${input.trim()}`));
  const answer = answerTexts(step).join(' ').trim();
  if (answer !== '') parts.push(sentence(`Assistant: ${answer}`));
  return parts.join(' ');
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * The summary of the dropped steps `anchors … firstRecent-1`, built on the latest summary found under `key` in the
 * previous steps (searched from the newest back) when it covers a prefix of them.
 */
export function rollingSummary(
  steps: readonly StoredStep[],
  window: HistoryWindow,
  key: string,
): RollingSummary | undefined {
  const dropEnd = window.firstRecent - 1;
  if (dropEnd < window.anchors) return undefined;
  let previous: RollingSummary | undefined;
  for (let index = steps.length - 1; index >= 0 && previous === undefined; index--) {
    const entry = steps[index]!.entries.find((candidate) => candidate.key === key);
    if (entry && isRollingSummary(entry.value) && entry.value.throughStep <= dropEnd) previous = entry.value;
  }
  if (previous?.throughStep === dropEnd) return previous;
  const from = previous === undefined ? window.anchors : previous.throughStep + 1;
  const added = steps
    .slice(from, dropEnd + 1)
    .map(stepText)
    .filter((text) => text !== '');
  const text = summarize([previous?.text ?? '', ...added].join(' '), SUMMARY_SENTENCES);
  return { text, throughStep: dropEnd };
}

function isRollingSummary(value: unknown): value is RollingSummary {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RollingSummary).text === 'string' &&
    typeof (value as RollingSummary).throughStep === 'number'
  );
}
