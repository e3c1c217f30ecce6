import { Type, type Static, type TObject, type TOptional, type TString } from '@sinclair/typebox';
import { parseExpressions, type Expression } from '../../../expressions/expressions.ts';
import { latestEntry, type StoredStep } from '../../../runtime/memory.ts';
import { DeploymentError } from '../../../runtime/tasks.ts';
import type { Turn } from '../../../runtime/turn.ts';
import { memoize } from '../../../shared/memo.ts';
import { templateData } from '../../../templating/data-model.ts';
import { parsePath, type PathSegment } from '../../../templating/paths.ts';

/**
 * What behavior rule conditions (reference §4.3) share: the condition-type contract, the per-evaluation state and
 * helpers. Each condition type is a module of its own (`{ name, configSchema, compile }`, registered in
 * `index.ts`) and compiles once, at deployment or as the write-time dry run, into an evaluator closure:
 * expressions, action lists, paths and numbers are parsed then; a turn only evaluates. A condition reports
 * `success`, `fail` or `notExecuted` (could not evaluate: counts as failure for a rule, and a negation passes it
 * on unchanged instead of inverting it).
 */

/** A configuration a condition cannot work with; `path` is the JSON path of the field at fault. */
export class ConditionProblem extends DeploymentError {
  readonly path: string;

  constructor(message: string, path: string) {
    super(message);
    this.path = path;
  }
}

/** Refuses the condition being compiled; `at` names the field at fault below the condition (`'configs', key`). */
export type Invalid = (what: string, ...at: string[]) => ConditionProblem;

export interface ConditionContext {
  /** The name of the rule the condition belongs to. */
  readonly rule: string;
  /** The compiled nested conditions (negation, connector). */
  readonly children: readonly Evaluator[];
  readonly invalid: Invalid;
  /** The evaluator of another rule of the set, by name (dependency); refuses an unknown rule or a cycle. */
  ruleEvaluator(name: string): Evaluator;
}

export interface ConditionType<S extends TObject = TObject> {
  /** The `type` a rule condition gives. */
  readonly name: string;
  /** Its `configs`: every value is text; the keys it reads are described, others are left alone. */
  readonly configSchema: S;
  compile(configs: Static<S>, context: ConditionContext): Evaluator;
}

/** Declares a condition type; only here so that `compile` gets its parameter types from the schema. */
export function defineCondition<S extends TObject>(type: ConditionType<S>): ConditionType<S> {
  return type;
}

/** The schema of a condition type's `configs`: the keys it reads (all text), described. */
export function conditionConfigs<K extends string>(description: string, keys: Record<K, string>) {
  const properties = Object.fromEntries(
    Object.entries<string>(keys).map(([key, text]) => [key, Type.Optional(Type.String({ description: text }))]),
  );
  return Type.Object(properties as { [P in K]: TOptional<TString> }, {
    description,
    additionalProperties: Type.String(),
  });
}

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

const EXPRESSIONS_PARSED = 'expressions:parsed';
const RULES_SUCCESS = 'behavior_rules:success';

// ---------------------------------------------------------------------------------------------------------------
// Per-execution state: what several conditions read, computed at most once per rules-task execution
// ---------------------------------------------------------------------------------------------------------------

/** The current step's parsed expressions, per turn; re-parsed only when the stored text changed (a second parser). */
const currentExpressionsByTurn = new WeakMap<
  Turn,
  { readonly text: unknown; readonly expressions: readonly Expression[] | null }
>();

export function parseLeniently(text: string): readonly Expression[] | null {
  try {
    return parseExpressions(text);
  } catch {
    return null;
  }
}

/** Parsed expressions of stored text (previous steps, tally keys): bounded, shared by every conversation. */
export const parseCached = memoize(parseLeniently, { max: 10_000 });

/** The expressions stored as `expressions:parsed` text (absent: none; unparsable: null). */
export function expressionsOfText(text: unknown): readonly Expression[] | null {
  return typeof text === 'string' ? parseCached(text) : [];
}

export function expressionsOfStep(step: StoredStep): readonly Expression[] | null {
  return expressionsOfText(latestEntry(step, EXPRESSIONS_PARSED)?.value);
}

export function actionsOfStep(step: StoredStep): readonly string[] {
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
      if (Array.isArray(written))
        for (const name of written) counts.set(String(name), (counts.get(String(name)) ?? 0) + 1);
      this.#successes = counts;
    }
    return this.#successes.get(rule) ?? 0;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

export const state = (holds: boolean): ConditionState => (holds ? 'success' : 'fail');

/** Java-like `toString()` of a data value, as upstream compares configured text with it. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(textOf).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${key}=${textOf(item)}`)
      .join(', ')}}`;
  return String(value);
}

export function containsRun(list: readonly string[], run: readonly string[]): boolean {
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

export type Occurrence = 'currentStep' | 'lastStep' | 'anyStep' | 'never';
export const OCCURRENCES: readonly string[] = ['currentStep', 'lastStep', 'anyStep', 'never'];

/**
 * Builds the evaluator for one of the four occurrences from three ways of looking: at a list (the current or
 * the last step's), at the current step, and at the previous steps (using the tallies where they suffice).
 */
export function byOccurrence(
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

/** The text of a config that must be given and not blank. */
export function requiredConfig(configs: Readonly<Record<string, string>>, key: string, invalid: Invalid): string {
  const text = configs[key];
  if (text === undefined || text.trim() === '') throw invalid(`needs a non-blank '${key}' config.`, 'configs', key);
  return text;
}

/** The expressions written in config `key`; a deployment problem naming it when they do not parse. */
export function expressionsConfig(text: string, key: string, invalid: Invalid): Expression[] {
  try {
    return parseExpressions(text);
  } catch (error) {
    throw invalid(`'${key}' does not parse: ${(error as Error).message}`, 'configs', key);
  }
}

export function integerConfig(configs: Readonly<Record<string, string>>, key: string, invalid: Invalid): number {
  const text = configs[key];
  if (text === undefined || text.trim() === '') return -1;
  if (!/^-?\d+$/.test(text.trim()))
    throw invalid(`'${key}' must be an integer written as text, not '${text}'.`, 'configs', key);
  return Number(text.trim());
}

/** A path into data: `$.` is optional (`username`, `$.profile.username`, `list[0].name`, `$[0].name`). */
export function compilePath(text: string, key: string, invalid: Invalid): readonly PathSegment[] {
  let rest = text
    .trim()
    .replace(/^\$(?=[.[]|$)/, '')
    .replace(/^\./, '');
  const leading: number[] = [];
  for (let index = /^\[(\d+)\]/.exec(rest); index !== null; index = /^\[(\d+)\]/.exec(rest)) {
    leading.push(Number(index[1]));
    rest = rest.slice(index[0].length);
  }
  if (leading.length > 0) {
    if (rest === '') return leading;
    if (!rest.startsWith('.')) throw invalid(`'${key}' is not a valid path: '${text}'.`, 'configs', key);
    rest = rest.slice(1);
  }
  try {
    return [...leading, ...parsePath(rest)];
  } catch {
    throw invalid(`'${key}' is not a valid path: '${text}'.`, 'configs', key);
  }
}

export function occurrenceOf(configs: Readonly<Record<string, string>>, invalid: Invalid): Occurrence {
  const value = configs.occurrence;
  if (value === undefined || value.trim() === '') return 'currentStep';
  if (!OCCURRENCES.includes(value))
    throw invalid(`'occurrence' is '${value}'; allowed: ${OCCURRENCES.join(', ')}.`, 'configs', 'occurrence');
  return value as Occurrence;
}

/** Size of a value: element count of a list or map, the number itself, an integer text, else the text length. */
export function sizeOf(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'number') return value;
  if (typeof value === 'object') return Object.keys(value).length;
  const text = String(value);
  return /^[-+]?\d+$/.test(text) ? Number(text) : text.length;
}
