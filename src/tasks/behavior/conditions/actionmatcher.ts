import type { Turn } from '../../../runtime/turn.ts';
import {
  actionsOfStep,
  byOccurrence,
  conditionConfigs,
  containsRun,
  defineCondition,
  occurrenceOf,
  requiredConfig,
  state,
} from './support.ts';

export const actionmatcher = defineCondition({
  name: 'actionmatcher',
  configSchema: conditionConfigs("Matches the step's actions.", {
    actions: "Comma-separated actions to find, in this order; 'empty' matches no actions.",
    occurrence: 'currentStep (default), lastStep, anyStep or never.',
  }),
  compile(configs, { invalid }) {
    const run = requiredConfig(configs, 'actions', invalid)
      .split(',')
      .map((action) => action.trim())
      .filter((action) => action !== '');
    const emptyRun = run.length === 1 && run[0] === 'empty';
    const matchList = (list: readonly string[]) =>
      (emptyRun && list.length === 0) || (list.length > 0 && containsRun(list, run));
    const inPreviousSteps = (turn: Turn): boolean => {
      const counts = turn.tallies.actions;
      if (!emptyRun) {
        for (const action of run) if (!((counts[action] ?? 0) > 0)) return false;
        if (run.length === 1) return true;
      }
      return turn.previousSteps.some((step) => matchList(actionsOfStep(step)));
    };
    return byOccurrence(
      occurrenceOf(configs, invalid),
      (evaluation) => state(matchList(evaluation.turn.actions)),
      (step) => state(matchList(actionsOfStep(step))),
      inPreviousSteps,
    );
  },
});
