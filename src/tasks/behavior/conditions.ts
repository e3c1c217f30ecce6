import { fieldPath, indexPath } from '../../resources/schemas/common.ts';
import { conditionTypes } from './conditions/index.ts';
import {
  ConditionProblem,
  state,
  type BehaviorConditionDefinition,
  type Evaluator,
  type Invalid,
} from './conditions/support.ts';

export { ConditionProblem, Evaluation, sizeOf, textOf } from './conditions/support.ts';
export type {
  BehaviorConditionDefinition,
  BehaviorRuleDefinition,
  ConditionState,
  Evaluator,
} from './conditions/support.ts';

/**
 * Compiles rule conditions with the registered condition types (`conditions/index.ts`). The same code runs at
 * deployment (the first problem fails it) and as the write-time dry run of a behavior set (every problem is
 * reported with its JSON path), so each rule about a condition's configuration is written once.
 */

/** Nested conditions (negation, connector) may be this many levels deep. */
export const MAX_CONDITION_DEPTH = 8;

const byName = new Map(conditionTypes.map((type) => [type.name, type]));

export interface ConditionScope {
  /** The name of the rule being compiled. */
  readonly rule: string;
  /** The evaluator of another rule of the set; refuses (with `invalid`) an unknown rule or a cycle. */
  ruleEvaluator(name: string, invalid: Invalid): Evaluator;
  /** Dry run: a problem is reported and the condition left out, instead of failing the compilation. */
  readonly report?: ((problem: ConditionProblem) => void) | undefined;
}

/** Compiles one condition (and its nested ones) at `path`, `depth` levels deep (1 for a rule's own conditions). */
export function compileCondition(
  condition: BehaviorConditionDefinition,
  path: string,
  depth: number,
  scope: ConditionScope,
): Evaluator {
  const type = String(condition.type);
  const invalid: Invalid = (what, ...at) =>
    new ConditionProblem(
      `Invalid '${type}' condition in behavior rule '${scope.rule}' at ${path}: ${what}`,
      at.reduce(fieldPath, path),
    );
  try {
    const conditionType = byName.get(type);
    if (!conditionType) {
      const at = fieldPath(path, 'type');
      throw new ConditionProblem(
        `Unknown condition type '${type}' at ${at} in behavior rule '${scope.rule}'; known types: ${[...byName.keys()].join(', ')}.`,
        at,
      );
    }
    const nested = condition.conditions ?? [];
    if (nested.length > 0 && depth >= MAX_CONDITION_DEPTH) {
      const at = fieldPath(path, 'conditions');
      throw new ConditionProblem(`Conditions may be nested at most ${MAX_CONDITION_DEPTH} levels deep (${at}).`, at);
    }
    const children = nested.map((child, i) =>
      compileCondition(child, indexPath(fieldPath(path, 'conditions'), i), depth + 1, scope),
    );
    return conditionType.compile(condition.configs ?? {}, {
      rule: scope.rule,
      children,
      invalid,
      ruleEvaluator: (name) => scope.ruleEvaluator(name, (what) => invalid(what, 'configs', 'reference')),
    });
  } catch (error) {
    if (!(error instanceof ConditionProblem) || !scope.report) throw error;
    scope.report(error);
    return () => 'notExecuted';
  }
}

/** All conditions must succeed, left to right, stopping at the first that does not; none at all: success. */
export function allOf(conditions: readonly Evaluator[]): Evaluator {
  if (conditions.length === 0) return () => 'success';
  if (conditions.length === 1) {
    const only = conditions[0]!;
    return (evaluation) => state(only(evaluation) === 'success');
  }
  return (evaluation) => {
    for (const condition of conditions) if (condition(evaluation) !== 'success') return 'fail';
    return 'success';
  };
}
