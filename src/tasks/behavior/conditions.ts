import { containsSequence, matches, parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { latestEntry, type StoredStep } from '../../runtime/memory.ts';
import { memoize } from '../../shared/memo.ts';
import { DeploymentError } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { templateData } from '../../templating/data-model.ts';
import { parsePath, resolvePath, type PathSegment } from '../../templating/paths.ts';

/**
 * Behavior rule conditions (reference §4.3), compiled once at deployment into evaluator closures: expressions,
 * action lists, paths and numbers are parsed here; a turn only evaluates. A condition reports `success`,
 * `fail` or `notExecuted` (could not evaluate: counts as failure for a rule, and a negation passes it on
 * unchanged instead of inverting it).
 */

export type ConditionState = 'success' | 'fail' | 'notExecuted';
export type Evaluator = (evaluation: Evaluation) => ConditionState;

export interface BehaviorConditionDefinition {
  readonly type: string;
  readonly configs?: Readonly<Record<string, string>>;
  readonly conditions?: readonly BehaviorConditionDefinition[];
}

export interface BehaviorRuleDefinition {
  readonly name: string;
  readonly actions?: readonly string[];
  readonly conditions?: readonly BehaviorConditionDefinition[];
}

/** What a condition may need besides its own configuration: the other rules of the set (for `dependency`). */
export interface ConditionCompiler {
  /** The evaluator of the named rule's conditions; throws a DeploymentError for an unknown rule or a cycle. */
  ruleEvaluator(name: string, from: string): Evaluator;
}

const EXPRESSIONS_PARSED = 'expressions:parsed';
const RULES_SUCCESS = 'behavior_rules:success';

// ---------------------------------------------------------------------------------------------------------------
// Per-execution state: what several conditions read, computed at most once per rules-task execution
// ---------------------------------------------------------------------------------------------------------------

/** The current step's parsed expressions, per turn; re-parsed only when the stored text changed (a second parser). */
const currentExpressionsByTurn = new WeakMap<Turn, { readonly text: unknown; readonly expressions: readonly Expression[] | null }>();

function parseLeniently(text: string): readonly Expression[] | null {
  try {
    return parseExpressions(text);
  } catch {
    return null;
  }
}

/** Parsed expressions of stored text (previous steps, tally keys): bounded, shared by every conversation. */
const parseCached = memoize(parseLeniently, { max: 10_000 });

/** The expressions stored as `expressions:parsed` text (absent: none; unparsable: null). */
function expressionsOfText(text: unknown): readonly Expression[] | null {
  return typeof text === 'string' ? parseCached(text) : [];
}

function expressionsOfStep(step: StoredStep): readonly Expression[] | null {
  return expressionsOfText(latestEntry(step, EXPRESSIONS_PARSED)?.value);
}

function actionsOfStep(step: StoredStep): readonly string[] {
  const actions = latestEntry(step, 'actions')?.value;
  return Array.isArray(actions) ? actions.map(String) : [];
}

/** One evaluation of a behavior set against a turn. */
export class Evaluation {
  readonly turn: Turn;
  #data: Record<string, unknown> | undefined;
  #successes: ReadonlyMap<string, number> | undefined;

  constructor(turn: Turn) {
    this.turn = turn;
  }

  /** The current step's parsed expressions (none when absent; null when the stored text does not parse). */
  get expressions(): readonly Expression[] | null {
    const text = this.turn.get(EXPRESSIONS_PARSED);
    const cached = currentExpressionsByTurn.get(this.turn);
    if (cached && cached.text === text) return cached.expressions;
    const expressions = typeof text === 'string' ? parseLeniently(text) : [];
    currentExpressionsByTurn.set(this.turn, { text, expressions });
    return expressions;
  }

  /** The template data model (reference §6.2), built once per evaluation. */
  get data(): Record<string, unknown> {
    this.#data ??= templateData(this.turn);
    return this.#data;
  }

  /** How often `rule` is in this step's success list already (written by an earlier rules task of this step). */
  successesInStep(rule: string): number {
    if (this.#successes === undefined) {
      const counts = new Map<string, number>();
      const written = this.turn.get(RULES_SUCCESS);
      if (Array.isArray(written)) for (const name of written) counts.set(String(name), (counts.get(String(name)) ?? 0) + 1);
      this.#successes = counts;
    }
    return this.#successes.get(rule) ?? 0;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

const state = (holds: boolean): ConditionState => (holds ? 'success' : 'fail');

/** Java-like `toString()` of a data value, as upstream compares configured text with it. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(textOf).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([key, item]) => `${key}=${textOf(item)}`).join(', ')}}`;
  return String(value);
}

function containsRun(list: readonly string[], run: readonly string[]): boolean {
  for (let start = 0; start + run.length <= list.length; start++) {
    let all = true;
    for (let offset = 0; offset < run.length; offset++) {
      if (list[start + offset] !== run[offset]) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

type Occurrence = 'currentStep' | 'lastStep' | 'anyStep' | 'never';
const OCCURRENCES: readonly string[] = ['currentStep', 'lastStep', 'anyStep', 'never'];

/**
 * Builds the evaluator for one of the four occurrences from three ways of looking: at a list (the current or
 * the last step's), at the current step, and at the previous steps (using the tallies where they suffice).
 */
function byOccurrence(
  occurrence: Occurrence,
  current: (evaluation: Evaluation) => ConditionState,
  last: (step: StoredStep) => ConditionState,
  inPreviousSteps: (turn: Turn) => boolean,
): Evaluator {
  const lastStep: Evaluator = (evaluation) => {
    const step = evaluation.turn.previousSteps.at(-1);
    return step === undefined ? 'fail' : last(step);
  };
  const anyStep: Evaluator = (evaluation) => {
    const now = current(evaluation);
    if (now === 'success') return now;
    return inPreviousSteps(evaluation.turn) ? 'success' : now;
  };
  switch (occurrence) {
    case 'currentStep':
      return current;
    case 'lastStep':
      return lastStep;
    case 'anyStep':
      return anyStep;
    case 'never':
      return (evaluation) => {
        const seen = anyStep(evaluation);
        return seen === 'notExecuted' ? seen : state(seen === 'fail');
      };
  }
}

function integerConfig(configs: Readonly<Record<string, string>>, key: string, invalid: (what: string) => DeploymentError): number {
  const text = configs[key];
  if (text === undefined || text.trim() === '') return -1;
  if (!/^-?\d+$/.test(text.trim())) throw invalid(`'${key}' must be an integer written as text, not '${text}'.`);
  return Number(text.trim());
}

/** A path into data: `$.` is optional (`username`, `$.profile.username`, `list[0].name`, `$[0].name`). */
function compilePath(text: string, key: string, invalid: (what: string) => DeploymentError): readonly PathSegment[] {
  let rest = text.trim().replace(/^\$(?=[.[]|$)/, '').replace(/^\./, '');
  const leading: number[] = [];
  for (let index = /^\[(\d+)\]/.exec(rest); index !== null; index = /^\[(\d+)\]/.exec(rest)) {
    leading.push(Number(index[1]));
    rest = rest.slice(index[0].length);
  }
  if (leading.length > 0) {
    if (rest === '') return leading;
    if (!rest.startsWith('.')) throw invalid(`'${key}' is not a valid path: '${text}'.`);
    rest = rest.slice(1);
  }
  try {
    return [...leading, ...parsePath(rest)];
  } catch {
    throw invalid(`'${key}' is not a valid path: '${text}'.`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Condition types
// ---------------------------------------------------------------------------------------------------------------

type ConditionFactory = (
  configs: Readonly<Record<string, string>>,
  children: readonly Evaluator[],
  invalid: (what: string) => DeploymentError,
  compiler: ConditionCompiler,
  rule: string,
) => Evaluator;

const isEmptyKeyword = (expression: Expression | undefined) =>
  expression !== undefined && expression.name === 'empty' && expression.domain === undefined && expression.args.length === 0;

const inputmatcher: ConditionFactory = (configs, _children, invalid) => {
  const text = configs['expressions'];
  if (text === undefined || text.trim() === '') throw invalid("needs a non-blank 'expressions' config.");
  let pattern: Expression[];
  try {
    pattern = parseExpressions(text);
  } catch (error) {
    throw invalid(`'expressions' does not parse: ${(error as Error).message}`);
  }
  const emptyPattern = pattern.length === 1 && isEmptyKeyword(pattern[0]);
  const matchList = (list: readonly Expression[]) =>
    (emptyPattern && list.length === 0) || (list.length > 0 && containsSequence(list, pattern));

  // Single expressions of earlier steps are in the tallies: one check per distinct expression, memoised (tally
  // keys are few per conversation, but shared by all).
  const elementMatches = pattern.map((expected) => memoize((key) => {
    const parsed = parseCached(key);
    return parsed !== null && parsed.length === 1 && matches(expected, parsed[0]!);
  }, { max: 10_000 }));
  const walk = (turn: Turn) => turn.previousSteps.some((step) => {
    const list = expressionsOfStep(step);
    return list !== null && matchList(list);
  });
  const inPreviousSteps = (turn: Turn): boolean => {
    const counts = turn.tallies.expressions as Readonly<Record<string, number>> | undefined;
    if (counts === undefined || emptyPattern) return walk(turn); // steps without expressions are not tallied
    const seen = (index: number) => {
      for (const key in counts) if (counts[key]! > 0 && elementMatches[index]!(key)) return true;
      return false;
    };
    if (pattern.length === 1) return seen(0);
    // A contiguous run needs every element in one step: walk only when each of them was seen at all.
    for (let index = 0; index < pattern.length; index++) if (!seen(index)) return false;
    return walk(turn);
  };

  return byOccurrence(
    occurrence(configs, invalid),
    (evaluation) => {
      const list = evaluation.expressions;
      return list === null ? 'notExecuted' : state(matchList(list));
    },
    (step) => {
      const list = expressionsOfStep(step);
      return list === null ? 'notExecuted' : state(matchList(list));
    },
    inPreviousSteps,
  );
};

function occurrence(configs: Readonly<Record<string, string>>, invalid: (what: string) => DeploymentError): Occurrence {
  const value = configs['occurrence'];
  if (value === undefined || value.trim() === '') return 'currentStep';
  if (!OCCURRENCES.includes(value)) throw invalid(`'occurrence' is '${value}'; allowed: ${OCCURRENCES.join(', ')}.`);
  return value as Occurrence;
}

const actionmatcher: ConditionFactory = (configs, _children, invalid) => {
  const text = configs['actions'];
  if (text === undefined || text.trim() === '') throw invalid("needs a non-blank 'actions' config.");
  const run = text.split(',').map((action) => action.trim()).filter((action) => action !== '');
  const emptyRun = run.length === 1 && run[0] === 'empty';
  const matchList = (list: readonly string[]) => (emptyRun && list.length === 0) || (list.length > 0 && containsRun(list, run));
  const inPreviousSteps = (turn: Turn): boolean => {
    const counts = turn.tallies.actions;
    if (!emptyRun) {
      for (const action of run) if (!((counts[action] ?? 0) > 0)) return false;
      if (run.length === 1) return true;
    }
    return turn.previousSteps.some((step) => matchList(actionsOfStep(step)));
  };
  return byOccurrence(
    occurrence(configs, invalid),
    (evaluation) => state(matchList(evaluation.turn.actions)),
    (step) => state(matchList(actionsOfStep(step))),
    inPreviousSteps,
  );
};

const occurrenceCondition: ConditionFactory = (configs, _children, invalid) => {
  const rule = configs['behaviorRuleName'];
  if (rule === undefined || rule.trim() === '') throw invalid("needs a non-blank 'behaviorRuleName' config.");
  if (configs['minTimesOccurred'] === undefined && configs['maxTimesOccurred'] === undefined) {
    throw invalid("needs 'minTimesOccurred' or 'maxTimesOccurred' (or both).");
  }
  const min = integerConfig(configs, 'minTimesOccurred', invalid);
  const max = integerConfig(configs, 'maxTimesOccurred', invalid);
  return (evaluation) => {
    const count = (evaluation.turn.tallies.rules[rule] ?? 0) + evaluation.successesInStep(rule);
    return state((min < 0 || count >= min) && (max < 0 || count <= max));
  };
};

const negation: ConditionFactory = (_configs, children, invalid) => {
  if (children.length === 0) throw invalid("needs at least one nested condition in 'conditions'.");
  return (evaluation) => {
    for (const child of children) {
      const result = child(evaluation);
      if (result === 'fail') return 'success';
      if (result === 'notExecuted') return result;
    }
    return 'fail';
  };
};

const connector: ConditionFactory = (configs, children, invalid) => {
  if (children.length === 0) throw invalid("needs at least one nested condition in 'conditions'.");
  const operator = configs['operator'];
  if (operator === undefined || operator === 'AND') {
    return (evaluation) => state(children.every((child) => child(evaluation) === 'success'));
  }
  return (evaluation) => state(children.some((child) => child(evaluation) === 'success'));
};

const contextmatcher: ConditionFactory = (configs, _children, invalid) => {
  const key = configs['contextKey'];
  if (key === undefined || key.trim() === '') throw invalid("needs a non-blank 'contextKey' config.");
  const type = configs['contextType'];
  switch (type) {
    case 'string': {
      const expected = configs['string'];
      return (evaluation) => {
        const entry = evaluation.turn.context[key];
        if (entry === undefined || entry.type !== 'string' || typeof entry.value !== 'string') return 'fail';
        return state(expected === undefined || textOf(entry.value) === expected);
      };
    }
    case 'expressions': {
      let pattern: Expression[];
      try {
        pattern = parseExpressions(configs['expressions'] ?? '');
      } catch (error) {
        throw invalid(`'expressions' does not parse: ${(error as Error).message}`);
      }
      return (evaluation) => {
        const entry = evaluation.turn.context[key];
        if (entry === undefined || entry.type !== 'expressions' || typeof entry.value !== 'string') return 'fail';
        const list = parseCached(entry.value);
        return list === null ? 'notExecuted' : state(containsSequence(list, pattern));
      };
    }
    case 'object': {
      const pathText = configs['objectKeyPath'];
      if (pathText === undefined || pathText.trim() === '') throw invalid("needs an 'objectKeyPath' config for contextType 'object'.");
      const path = compilePath(pathText, 'objectKeyPath', invalid);
      const expected = configs['objectValue'];
      return (evaluation) => {
        const entry = evaluation.turn.context[key];
        if (entry === undefined || entry.type !== 'object' || entry.value === null || typeof entry.value !== 'object') return 'fail';
        const value = resolvePath(entry.value, path);
        if (value === undefined) return 'fail';
        return state(expected === undefined || (value !== null && textOf(value) === expected));
      };
    }
    default:
      throw invalid(`'contextType' is '${type ?? ''}'; allowed: string, expressions, object.`);
  }
};

const dynamicvaluematcher: ConditionFactory = (configs, _children, invalid) => {
  const pathText = configs['valuePath'];
  if (pathText === undefined || pathText.trim() === '') return () => 'notExecuted';
  const path = compilePath(pathText, 'valuePath', invalid);
  const equals = configs['equals'];
  const contains = configs['contains'];
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
};

/** Size of a value: element count of a list or map, the number itself, an integer text, else the text length. */
export function sizeOf(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'number') return value;
  if (typeof value === 'object') return Object.keys(value).length;
  const text = String(value);
  return /^[-+]?\d+$/.test(text) ? Number(text) : text.length;
}

const sizematcher: ConditionFactory = (configs, _children, invalid) => {
  const min = integerConfig(configs, 'min', invalid);
  const max = integerConfig(configs, 'max', invalid);
  const equal = integerConfig(configs, 'equal', invalid);
  if (min < 0 && max < 0 && equal < 0) return () => 'notExecuted';
  const pathText = configs['valuePath'];
  const path = pathText === undefined || pathText.trim() === '' ? undefined : compilePath(pathText, 'valuePath', invalid);
  return (evaluation) => {
    const size = path === undefined ? 0 : sizeOf(resolvePath(evaluation.data, path));
    return state((equal < 0 || size === equal) && (min < 0 || size >= min) && (max < 0 || size <= max));
  };
};

const dependency: ConditionFactory = (configs, _children, invalid, compiler, rule) => {
  const reference = configs['reference'];
  if (reference === undefined || reference.trim() === '') throw invalid("needs a non-blank 'reference' config.");
  const evaluate = compiler.ruleEvaluator(reference, rule);
  return (evaluation) => evaluate(evaluation);
};

const FACTORIES: Readonly<Record<string, ConditionFactory>> = {
  inputmatcher,
  actionmatcher,
  occurrence: occurrenceCondition,
  negation,
  connector,
  contextmatcher,
  dynamicvaluematcher,
  sizematcher,
  dependency,
};

/** Compiles one condition (and its nested ones) of `rule`; a configuration that cannot work is a DeploymentError. */
export function compileCondition(condition: BehaviorConditionDefinition, rule: string, compiler: ConditionCompiler): Evaluator {
  const type = String(condition.type);
  const invalid = (what: string) => new DeploymentError(`Invalid '${type}' condition in behavior rule '${rule}': ${what}`);
  const factory = Object.hasOwn(FACTORIES, type) ? FACTORIES[type] : undefined;
  if (!factory) throw new DeploymentError(`Unknown condition type '${type}' in behavior rule '${rule}'.`);
  const children = (condition.conditions ?? []).map((child) => compileCondition(child, rule, compiler));
  return factory(condition.configs ?? {}, children, invalid, compiler, rule);
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
