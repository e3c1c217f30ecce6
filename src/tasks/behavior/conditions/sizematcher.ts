import { resolvePath } from '../../../templating/paths.ts';
import { compilePath, conditionConfigs, defineCondition, integerConfig, sizeOf, state } from './support.ts';

export const sizematcher = defineCondition({
  name: 'sizematcher',
  configSchema: conditionConfigs('Tests the size of a value of the template data.', {
    valuePath: 'Path in the template data.',
    min: 'At least (integer as text).',
    max: 'At most (integer as text).',
    equal: 'Exactly (integer as text).',
  }),
  compile(configs, { invalid }) {
    const min = integerConfig(configs, 'min', invalid);
    const max = integerConfig(configs, 'max', invalid);
    const equal = integerConfig(configs, 'equal', invalid);
    if (min < 0 && max < 0 && equal < 0) return () => 'notExecuted';
    const pathText = configs.valuePath;
    const path =
      pathText === undefined || pathText.trim() === '' ? undefined : compilePath(pathText, 'valuePath', invalid);
    return (evaluation) => {
      const size = path === undefined ? 0 : sizeOf(resolvePath(evaluation.data, path));
      return state((equal < 0 || size === equal) && (min < 0 || size >= min) && (max < 0 || size <= max));
    };
  },
});
