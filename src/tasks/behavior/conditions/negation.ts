import { conditionConfigs, defineCondition } from './support.ts';

export const negation = defineCondition({
  name: 'negation',
  configSchema: conditionConfigs("Succeeds when its nested 'conditions' do not all succeed.", {
  }),
  compile(configs, { children, invalid }) {
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
