import { containsSequence, matches, type Expression } from '../../../expressions/expressions.ts';
import type { Turn } from '../../../runtime/turn.ts';
import { memoGroup } from '../../../shared/memo.ts';
import {
  byOccurrence,
  conditionConfigs,
  defineCondition,
  expressionsConfig,
  expressionsOfStep,
  occurrenceOf,
  parseCached,
  requiredConfig,
  state,
} from './support.ts';

const isEmptyKeyword = (expression: Expression | undefined) =>
  expression !== undefined &&
  expression.name === 'empty' &&
  expression.domain === undefined &&
  expression.args.length === 0;

/** Whether a tally key matches one expected element, for every inputmatcher of every deployed agent. */
const elementMemo = memoGroup(100_000);

export const inputmatcher = defineCondition({
  name: 'inputmatcher',
  configSchema: conditionConfigs('Matches the parsed input expressions.', {
    expressions: "Expressions to find, in this order, e.g. 'greeting(*)'; 'empty' matches no expressions.",
    occurrence: 'currentStep (default), lastStep, anyStep or never.',
  }),
  compile(configs, { invalid }) {
    const pattern = expressionsConfig(requiredConfig(configs, 'expressions', invalid), 'expressions', invalid);
    const emptyPattern = pattern.length === 1 && isEmptyKeyword(pattern[0]);
    const matchList = (list: readonly Expression[]) =>
      (emptyPattern && list.length === 0) || (list.length > 0 && containsSequence(list, pattern));

    // Single expressions of earlier steps are in the tallies: one check per distinct expression, memoised (tally
    // keys are few per conversation, but shared by all).
    const elementMatches = pattern.map((expected) =>
      elementMemo((key) => {
        const parsed = parseCached(key);
        return parsed !== null && parsed.length === 1 && matches(expected, parsed[0]!);
      }),
    );
    const walk = (turn: Turn) =>
      turn.previousSteps.some((step) => {
        const list = expressionsOfStep(step);
        return list !== null && matchList(list);
      });
    const inPreviousSteps = (turn: Turn): boolean => {
      const counts = turn.tallies.expressions as Readonly<Record<string, number>> | undefined;
      if (counts === undefined || emptyPattern) return walk(turn); // steps without expressions are not tallied
      const seen = (index: number) => {
        for (const key in counts) if (counts[key]! > 0 && elementMatches[index]!(key)) return true;
        return false;
      };
      if (pattern.length === 1) return seen(0);
      // A contiguous run needs every element in one step: walk only when each of them was seen at all.
      for (let index = 0; index < pattern.length; index++) if (!seen(index)) return false;
      return walk(turn);
    };

    return byOccurrence(
      occurrenceOf(configs, invalid),
      (evaluation) => {
        const list = evaluation.expressions;
        return list === null ? 'notExecuted' : state(matchList(list));
      },
      (step) => {
        const list = expressionsOfStep(step);
        return list === null ? 'notExecuted' : state(matchList(list));
      },
      inPreviousSteps,
    );
  },
});
