import { conditionConfigs, defineCondition } from './support.ts';

export const negation = defineCondition({
  name: 'negation',
  configSchema: conditionConfigs(
    "Succeeds when one of its nested 'conditions' fails (one that cannot be evaluated passes that on).",
    {},
  ),
  compile(_configs, { children, invalid }) {
    if (children.length === 0) throw invalid("needs at least one nested condition in 'conditions'.", 'conditions');
    return (evaluation) => {
      for (const child of children) {
        const result = child(evaluation);
        if (result === 'fail') return 'success';
        if (result === 'notExecuted') return result;
      }
      return 'fail';
    };
  },
});
