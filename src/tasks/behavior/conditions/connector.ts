import { conditionConfigs, defineCondition, state } from './support.ts';

export const connector = defineCondition({
  name: 'connector',
  configSchema: conditionConfigs("Joins its nested 'conditions' with AND (default) or OR.", {
    operator: 'AND (default) or OR.',
  }),
  compile(configs, { children, invalid }) {
    if (children.length === 0) throw invalid("needs at least one nested condition in 'conditions'.", 'conditions');
    const operator = configs.operator;
    if (operator !== undefined && operator !== 'AND' && operator !== 'OR')
      throw invalid(`'operator' is '${operator}'; allowed: AND, OR.`, 'configs', 'operator');
    if (operator === undefined || operator === 'AND') {
      return (evaluation) => state(children.every((child) => child(evaluation) === 'success'));
    }
    return (evaluation) => state(children.some((child) => child(evaluation) === 'success'));
  },
});
