import { notFound } from '../errors.ts';
import type { StoredStepText } from '../storage/runtime-ports.ts';
import { CompactStep, type EarlierStepsReader } from './compact-step.ts';
import type { StoredStep } from './memory.ts';

/**
 * A cached conversation of a store that reads without waiting (the embedded one) holds the text of its latest steps
 * only: loading it reads those, and each commit lets go of the text of the step that left them. An earlier step
 * reads its text from the store when one of its parts is first asked for (undo past them, a history window, a
 * template reading `memory.past`, a client reading the whole log), together with the earlier steps after it that are
 * not held either: the steps whose text is held are always the latest ones, one run up to the newest. So a turn
 * costs the same whether its conversation was cached or not, and at step 1000 as at step 10, unless the agent reads
 * the whole history; and the cache's bound on step text holds many more long conversations.
 */
export class EarlierSteps implements EarlierStepsReader {
  readonly #conversationId: string;
  readonly #readNow: (fromIndex: number, toIndex: number) => StoredStepText[] | undefined;
  /** The conversation's steps (the array its turns append to and undo takes from). */
  readonly #steps: StoredStep[];

  constructor(
    conversationId: string,
    steps: StoredStep[],
    readNow: (fromIndex: number, toIndex: number) => StoredStepText[] | undefined,
  ) {
    this.#conversationId = conversationId;
    this.#steps = steps;
    this.#readNow = readNow;
  }

  /** `count` steps not read yet, for the start of a conversation loaded from its latest steps. */
  notRead(count: number): CompactStep[] {
    return Array.from({ length: count }, (_, position) => CompactStep.notRead(this, position));
  }

  read(step: CompactStep, position: number): void {
    // One taken off the conversation (undone) is read alone.
    const steps = this.#steps[position] === step ? this.#steps : [step];
    const first = steps === this.#steps ? position : 0;
    let end = first + 1;
    while (end < steps.length && !holdsText(steps[end])) end++;
    const texts = this.#readNow(position, position + end - first);
    if (texts === undefined || texts.length !== end - first)
      throw notFound(`Conversation ${this.#conversationId} is no longer stored.`);
    for (const [offset, text] of texts.entries()) (steps[first + offset] as CompactStep).hold(text);
  }

  /** Lets go of the text of the steps before the latest `count` (those held: the run ends at the first that is not). */
  holdLatest(count: number): void {
    for (let position = this.#steps.length - count - 1; position >= 0; position--) {
      const step = this.#steps[position];
      if (!holdsText(step)) return;
      (step as CompactStep).letGo(this, position);
    }
  }
}

/** A step made by a turn that is not compact yet holds its parts as objects. */
function holdsText(step: StoredStep | undefined): boolean {
  return !(step instanceof CompactStep) || step.holdsText;
}
