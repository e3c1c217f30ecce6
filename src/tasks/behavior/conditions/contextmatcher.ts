import { containsSequence } from '../../../expressions/expressions.ts';
import { resolvePath } from '../../../templating/paths.ts';
import {
  compilePath,
  conditionConfigs,
  defineCondition,
  expressionsConfig,
  parseCached,
  requiredConfig,
  state,
  textOf,
} from './support.ts';

const CONTEXT_TYPES = ['string', 'expressions', 'object'];

export const contextmatcher = defineCondition({
  name: 'contextmatcher',
  configSchema: conditionConfigs('Matches a context value of the message.', {
    contextKey: 'Name of the context entry.',
    contextType: 'string, expressions or object.',
    string: 'contextType string: the expected text.',
    expressions: 'contextType expressions: expressions to find.',
    objectKeyPath: 'contextType object: path in the object.',
    objectValue: 'contextType object: the expected value as text.',
  }),
  compile(configs, { invalid }) {
    const key = requiredConfig(configs, 'contextKey', invalid);
    const type = configs.contextType;
    switch (type) {
      case 'string': {
        const expected = configs.string;
        return (evaluation) => {
          const entry = evaluation.turn.context[key];
          if (entry === undefined || entry.type !== 'string' || typeof entry.value !== 'string') return 'fail';
          return state(expected === undefined || textOf(entry.value) === expected);
        };
      }
      case 'expressions': {
        const pattern = expressionsConfig(configs.expressions ?? '', 'expressions', invalid);
        return (evaluation) => {
          const entry = evaluation.turn.context[key];
          if (entry === undefined || entry.type !== 'expressions' || typeof entry.value !== 'string') return 'fail';
          const list = parseCached(entry.value);
          return list === null ? 'notExecuted' : state(containsSequence(list, pattern));
        };
      }
      case 'object': {
        const pathText = configs.objectKeyPath;
        if (pathText === undefined || pathText.trim() === '')
          throw invalid("needs an 'objectKeyPath' config for contextType 'object'.", 'configs', 'objectKeyPath');
        const path = compilePath(pathText, 'objectKeyPath', invalid);
        const expected = configs.objectValue;
        return (evaluation) => {
          const entry = evaluation.turn.context[key];
          if (entry === undefined || entry.type !== 'object' || entry.value === null || typeof entry.value !== 'object')
            return 'fail';
          const value = resolvePath(entry.value, path);
          if (value === undefined) return 'fail';
          return state(expected === undefined || (value !== null && textOf(value) === expected));
        };
      }
      default:
        if (type === undefined || type.trim() === '')
          throw invalid(`needs a 'contextType' config (${CONTEXT_TYPES.join(', ')}).`, 'configs', 'contextType');
        throw invalid(`'contextType' is '${type}'; allowed: ${CONTEXT_TYPES.join(', ')}.`, 'configs', 'contextType');
    }
  },
});
