import { actionmatcher } from './actionmatcher.ts';
import { connector } from './connector.ts';
import { contextmatcher } from './contextmatcher.ts';
import { dependency } from './dependency.ts';
import { dynamicvaluematcher } from './dynamicvaluematcher.ts';
import { inputmatcher } from './inputmatcher.ts';
import { negation } from './negation.ts';
import { occurrenceCondition } from './occurrence.ts';
import { sizematcher } from './sizematcher.ts';
import type { ConditionType } from './support.ts';

/** Every behavior rule condition type; a new one is one module plus one line here. */
export const conditionTypes: readonly ConditionType[] = [
  inputmatcher,
  actionmatcher,
  occurrenceCondition,
  negation,
  connector,
  contextmatcher,
  dynamicvaluematcher,
  sizematcher,
  dependency,
];
