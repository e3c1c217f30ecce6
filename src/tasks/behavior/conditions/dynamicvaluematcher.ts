import { resolvePath } from '../../../templating/paths.ts';
import { compilePath, conditionConfigs, defineCondition, state, textOf } from './support.ts';

export const dynamicvaluematcher = defineCondition({
  name: 'dynamicvaluematcher',
  configSchema: conditionConfigs('Tests a value of the template data.', {
    valuePath: "Path in the template data, e.g. 'properties.city'.",
    equals: 'The value as text equals this.',
    contains: 'The text contains this, or the list holds it.',
  }),
  compile(configs, { invalid }) {
    const pathText = configs.valuePath;
    if (pathText === undefined || pathText.trim() === '') return () => 'notExecuted';
    const path = compilePath(pathText, 'valuePath', invalid);
    const equals = configs.equals;
    const contains = configs.contains;
    return (evaluation) => {
      const value = resolvePath(evaluation.data, path);
      if (value === undefined || value === null) return 'fail';
      if (equals !== undefined && textOf(value) === equals) return 'success';
      if (contains !== undefined) {
        if (typeof value === 'string') return state(value.includes(contains));
        if (Array.isArray(value)) return state(value.some((item) => textOf(item) === contains));
        return 'fail';
      }
      if (equals !== undefined) return 'fail';
      return typeof value === 'boolean' ? state(value) : 'success';
    };
  },
});
