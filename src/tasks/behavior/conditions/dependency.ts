import { conditionConfigs, defineCondition } from './support.ts';

export const dependency = defineCondition({
  name: 'dependency',
  configSchema: conditionConfigs('Succeeds when another rule of the set (by name) would succeed.', {
    reference: 'Name of the other rule.',
  }),
  compile(configs, { invalid, ruleEvaluator }) {
    const reference = configs.reference;
    if (reference === undefined || reference.trim() === '')
      throw invalid("needs a non-blank 'reference' config.", 'configs', 'reference');
    const evaluate = ruleEvaluator(reference);
    return (evaluation) => evaluate(evaluation);
  },
});
