import { conditionConfigs, defineCondition, requiredConfig } from './support.ts';

export const dependency = defineCondition({
  name: 'dependency',
  configSchema: conditionConfigs('Succeeds when another rule of the set (by name) would succeed.', {
    reference: 'Name of the other rule.',
  }),
  compile(configs, { invalid, ruleEvaluator }) {
    const reference = requiredConfig(configs, 'reference', invalid);
    const evaluate = ruleEvaluator(reference);
    return (evaluation) => evaluate(evaluation);
  },
});
