import { conditionConfigs, defineCondition, integerConfig, requiredConfig, state } from './support.ts';

export const occurrenceCondition = defineCondition({
  name: 'occurrence',
  configSchema: conditionConfigs('Counts how often a rule succeeded in this conversation.', {
    behaviorRuleName: 'The rule counted.',
    minTimesOccurred: 'At least this often (integer as text).',
    maxTimesOccurred: 'At most this often (integer as text).',
  }),
  compile(configs, { invalid }) {
    const rule = requiredConfig(configs, 'behaviorRuleName', invalid);
    if (configs.minTimesOccurred === undefined && configs.maxTimesOccurred === undefined) {
      throw invalid("needs 'minTimesOccurred' or 'maxTimesOccurred' (or both).", 'configs');
    }
    const min = integerConfig(configs, 'minTimesOccurred', invalid);
    const max = integerConfig(configs, 'maxTimesOccurred', invalid);
    return (evaluation) => {
      const count = (evaluation.turn.tallies.rules[rule] ?? 0) + evaluation.successesInStep(rule);
      return state((min < 0 || count >= min) && (max < 0 || count <= max));
    };
  },
});
