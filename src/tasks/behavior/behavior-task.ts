import { Type } from '@sinclair/typebox';
import { closed } from '../../resources/schemas/common.ts';
import { defineTask, DeploymentError, stepUri, uriReferences } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import {
  allOf,
  compileCondition,
  Evaluation,
  type BehaviorRuleDefinition,
  type ConditionProblem,
  type ConditionScope,
  type Evaluator,
} from './conditions.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * `svc://ai.svc.behavior` (alias `svc://ai.svc.rules`): evaluates a behavior set's rules against the current
 * step and turns the successful rules into the step's actions (reference §4.2). Every condition is compiled at
 * deployment; a turn only evaluates.
 *
 * - Groups in order, rules of a group in order; `executeUntilFirstSuccess` (default) stops a group at its first
 *   successful rule, `executeAll` evaluates every rule.
 * - A rule succeeds when all its conditions succeed (left to right, short-circuit); no conditions: success.
 * - The actions of the successful rules, in order and de-duplicated, are appended to the step's actions
 *   (`appendActions`, default true) or replace them; with no new action the step's actions stay untouched.
 * - `expressionsAsActions` adds the names of the current step's expressions after the rules' actions.
 * - `behavior_rules:success` / `behavior_rules:fail` record the rule names (each written only when not empty,
 *   appended to what an earlier rules task of the same step wrote).
 */

export const BEHAVIOR_TASK_TYPE = 'ai.svc.behavior';

interface GroupDefinition {
  readonly name?: string;
  readonly executionStrategy?: string;
  readonly behaviorRules?: readonly BehaviorRuleDefinition[];
  /** Upstream's name for `behaviorRules`, accepted in case a stored set still carries it. */
  readonly rules?: readonly BehaviorRuleDefinition[];
}

interface BehaviorSetDefinition {
  readonly behaviorGroups?: readonly GroupDefinition[];
  readonly appendActions?: boolean;
  readonly expressionsAsActions?: boolean;
}

interface CompiledRule {
  readonly name: string;
  readonly actions: readonly string[];
  readonly evaluate: Evaluator;
}

interface CompiledGroup {
  readonly executeAll: boolean;
  readonly rules: readonly CompiledRule[];
  /**
   * The names of the group's first `count` rules: what a first-match group records as failed when rule `count`
   * answers (or none does). Usually the same list turn after turn, so one frozen array serves them all, and the
   * steps that keep it share it instead of a copy each.
   */
  namesBefore(count: number): readonly string[];
}

/** `namesBefore` remembering the last list it made (a group of n rules has n + 1 lists; most turns ask for one). */
function namesBeforeOf(names: readonly string[]): (count: number) => readonly string[] {
  let last: readonly string[] = Object.freeze([]);
  return (count) => {
    if (last.length !== count) last = Object.freeze(names.slice(0, count));
    return last;
  };
}

export interface BehaviorOptions {
  readonly appendActions: boolean;
  readonly expressionsAsActions: boolean;
}

/**
 * Compiles a behavior set (spec names) into its groups of rule evaluators. With `report`, a dry run: every
 * condition problem is reported (with its JSON path) instead of failing at the first (write-time checks).
 */
export function compileBehaviorSet(
  set: unknown,
  report?: (problem: ConditionProblem) => void,
): { groups: readonly CompiledGroup[]; options: Partial<BehaviorOptions> } {
  if (!isRecord(set)) throw new DeploymentError('The behavior set is not an object.');
  const definition = set as BehaviorSetDefinition;
  const groups = (definition.behaviorGroups ?? []).map((group, index) => {
    if (!isRecord(group)) throw new DeploymentError(`behaviorGroups[${index}] is not a behavior group.`);
    return group;
  });
  const rulesOf = (group: GroupDefinition) => group.behaviorRules ?? group.rules ?? [];
  const rulePath = (g: number, r: number) => `$.behaviorGroups[${g}].behaviorRules[${r}]`;

  const byName = new Map<string, { rule: BehaviorRuleDefinition; path: string }>();
  for (const [g, group] of groups.entries()) {
    for (const [r, rule] of rulesOf(group).entries()) {
      if (isRecord(rule) && !byName.has(rule.name)) byName.set(rule.name, { rule, path: rulePath(g, r) });
    }
  }

  const compiled = new Map<BehaviorRuleDefinition, Evaluator>();
  const inProgress: BehaviorRuleDefinition[] = [];
  const compileRule = (rule: BehaviorRuleDefinition, path: string): Evaluator => {
    const done = compiled.get(rule);
    if (done) return done;
    inProgress.push(rule);
    const scope: ConditionScope = {
      rule: rule.name,
      report,
      ruleEvaluator(name, invalid) {
        const other = byName.get(name);
        if (!other) throw invalid(`no behavior rule named '${name}' exists in this set.`);
        if (inProgress.includes(other.rule)) {
          const cycle = [...inProgress.slice(inProgress.indexOf(other.rule)), other.rule]
            .map((r) => `'${r.name}'`)
            .join(' -> ');
          throw invalid(`the rule dependencies form a cycle: ${cycle}.`);
        }
        return compileRule(other.rule, other.path);
      },
    };
    const evaluator = allOf(
      (rule.conditions ?? []).map((condition, c) => compileCondition(condition, `${path}.conditions[${c}]`, 1, scope)),
    );
    inProgress.pop();
    compiled.set(rule, evaluator);
    return evaluator;
  };

  const compiledGroups = groups.map((group, g): CompiledGroup => {
    const rules = rulesOf(group).map((rule, r) => {
      if (!isRecord(rule) || typeof rule.name !== 'string') {
        throw new DeploymentError(`behaviorGroups[${g}].behaviorRules[${r}] is not a behavior rule with a name.`);
      }
      return {
        name: rule.name,
        actions: (rule.actions ?? []).map(String),
        evaluate: compileRule(rule, rulePath(g, r)),
      };
    });
    return {
      executeAll: group.executionStrategy === 'executeAll',
      rules,
      namesBefore: namesBeforeOf(rules.map((rule) => rule.name)),
    };
  });

  const options: { appendActions?: boolean; expressionsAsActions?: boolean } = {};
  if (typeof definition.appendActions === 'boolean') options.appendActions = definition.appendActions;
  if (typeof definition.expressionsAsActions === 'boolean')
    options.expressionsAsActions = definition.expressionsAsActions;
  return { groups: compiledGroups, options };
}

/** Runs the compiled groups against the turn and writes the results into the current step. */
export function executeBehavior(turn: Turn, groups: readonly CompiledGroup[], options: BehaviorOptions): void {
  const evaluation = new Evaluation(turn);
  const succeeded: string[] = [];
  const failedByGroup: Array<readonly string[]> = [];
  const actions: string[] = [];
  for (const group of groups) {
    if (group.executeAll) {
      const failed: string[] = [];
      for (const rule of group.rules) {
        if (rule.evaluate(evaluation) === 'success') {
          succeeded.push(rule.name);
          actions.push(...rule.actions);
        } else failed.push(rule.name);
      }
      failedByGroup.push(failed);
      continue;
    }
    // First match: every rule before the one that answers failed.
    let answering = 0;
    for (const rule of group.rules) {
      if (rule.evaluate(evaluation) === 'success') {
        succeeded.push(rule.name);
        actions.push(...rule.actions);
        break;
      }
      answering++;
    }
    failedByGroup.push(group.namesBefore(answering));
  }
  const withFailures = failedByGroup.filter((names) => names.length > 0);
  const failed = withFailures.length === 1 ? withFailures[0]! : withFailures.flat();
  if (options.expressionsAsActions) {
    for (const expression of evaluation.expressions ?? []) actions.push(expression.name);
  }

  // `names` is this call's own list or a group's shared frozen one: stored as it is when the step has none yet.
  const record = (key: string, names: readonly string[]) => {
    if (names.length === 0) return;
    const earlier = turn.get(key);
    turn.set(key, Array.isArray(earlier) ? [...earlier, ...names] : names);
  };
  record('behavior_rules:success', succeeded);
  record('behavior_rules:fail', failed);

  if (actions.length === 0) return;
  turn.setActions(options.appendActions ? [...turn.actions, ...actions] : actions);
}

const uri = Type.Optional(
  Type.String({
    description: 'Reference of the behavior set: svc://ai.svc.behavior/behaviorstore/behaviorsets/<id>?version=<n>.',
  }),
);

export const behaviorTask = defineTask({
  type: BEHAVIOR_TASK_TYPE,
  aliases: ['ai.svc.rules'],
  configSchema: closed(
    {
      uri,
      appendActions: Type.Optional(
        Type.Boolean({
          description: "Append the produced actions to the step's actions (overrides the behavior set).",
        }),
      ),
      expressionsAsActions: Type.Optional(
        Type.Boolean({
          description: 'Also add the names of the input expressions as actions (overrides the behavior set).',
        }),
      ),
    },
    { description: 'The behavior set to evaluate and how its actions are applied.' },
  ),
  extensionsSchema: closed(
    { uri },
    { description: "The behavior set (when 'config.uri' is not given), as upstream workflows write it." },
  ),
  references: uriReferences('behavior'),
  async compile(config, extensions, context) {
    const reference = stepUri(config, extensions);
    if (reference === undefined) {
      throw new DeploymentError(
        "The behavior task needs 'config.uri' (or 'extensions.uri'), the reference of its behavior set.",
      );
    }
    const { groups, options: fromSet } = compileBehaviorSet(await context.resolve(reference, 'behavior'));
    const options: BehaviorOptions = {
      appendActions: config.appendActions ?? fromSet.appendActions ?? true,
      expressionsAsActions: config.expressionsAsActions ?? fromSet.expressionsAsActions ?? false,
    };
    return {
      type: BEHAVIOR_TASK_TYPE,
      execute(turn) {
        executeBehavior(turn, groups, options);
      },
    };
  },
});
