import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { aliasRenamer, arrayField, closed, fieldPath, indexPath, isBlank, stringEnum, stringMap, type AliasSpec, type JsonObject } from './common.ts';
import { isRecord } from '../../shared/json.ts';

/** Nested conditions (negation, connector) are described this many levels deep; deeper nesting is refused. */
export const MAX_CONDITION_DEPTH = 8;

export const CONDITION_TYPES = [
  'inputmatcher',
  'actionmatcher',
  'occurrence',
  'negation',
  'connector',
  'contextmatcher',
  'dynamicvaluematcher',
  'sizematcher',
  'dependency',
] as const;

export const OCCURRENCES = ['currentStep', 'lastStep', 'anyStep', 'never'] as const;
export const CONTEXT_TYPES = ['string', 'expressions', 'object'] as const;
export const CONNECTOR_OPERATORS = ['AND', 'OR'] as const;

export interface BehaviorCondition {
  type: string;
  configs?: Record<string, string>;
  conditions?: BehaviorCondition[];
}

const CONDITION_DESCRIPTION =
  "A rule condition. 'type' is one of " +
  CONDITION_TYPES.join(', ') +
  "; 'configs' holds its parameters as text (numbers too, e.g. \"maxTimesOccurred\": \"0\"); 'conditions' nests child conditions (negation, connector).";

/** The condition schema, unrolled to a fixed depth so that it needs no `$id`/`$ref`. */
function conditionSchema(level: number): TSchema {
  const nested =
    level < MAX_CONDITION_DEPTH
      ? Type.Array(conditionSchema(level + 1), { description: 'Child conditions (negation, connector).' })
      : Type.Array(Type.Unknown(), { description: `Child conditions; nesting deeper than ${MAX_CONDITION_DEPTH} levels is refused.` });
  return closed(
    {
      type: Type.String({ description: `Condition type: ${CONDITION_TYPES.join(', ')}.` }),
      configs: Type.Optional(stringMap('Parameters of the condition, all values as text.')),
      conditions: Type.Optional(nested),
    },
    { description: CONDITION_DESCRIPTION },
  );
}

export const BehaviorConditionSchema = Type.Unsafe<BehaviorCondition>(conditionSchema(1));

export const BehaviorRuleSchema = closed(
  {
    name: Type.String({ description: "Rule name; 'occurrence' and 'dependency' conditions refer to rules by name." }),
    actions: Type.Optional(
      Type.Array(Type.String(), {
        description: "Actions produced when the rule matches; CONVERSATION_START and CONVERSATION_END are reserved; 'httpcall(<name>)' triggers the HTTP call of that name.",
      }),
    ),
    conditions: Type.Optional(
      Type.Array(BehaviorConditionSchema, { description: 'The rule matches when all its conditions hold (no conditions: always).' }),
    ),
  },
  { description: 'A behavior rule.' },
);

export const BehaviorGroupSchema = closed(
  {
    name: Type.Optional(Type.String({ description: 'Group name.' })),
    executionStrategy: Type.Optional(
      stringEnum(
        ['executeUntilFirstSuccess', 'executeAll'],
        "'executeUntilFirstSuccess' (default): the first matching rule of the group fires; 'executeAll': every matching rule fires.",
      ),
    ),
    behaviorRules: Type.Optional(Type.Array(BehaviorRuleSchema, { description: 'Rules, evaluated in order.' })),
  },
  { description: 'A group of behavior rules.' },
);

export const BehaviorSetSchema = closed(
  {
    behaviorGroups: Type.Optional(Type.Array(BehaviorGroupSchema, { description: 'Groups of rules, evaluated in order.' })),
    appendActions: Type.Optional(
      Type.Boolean({ description: "Append the produced actions to the step's actions (default true); the workflow extension's config overrides it." }),
    ),
    expressionsAsActions: Type.Optional(
      Type.Boolean({ description: 'Also add the names of the input expressions as actions (default false).' }),
    ),
  },
  { title: 'BehaviorSet', description: 'A behavior set: groups of rules turning input and context into actions.' },
);
export type BehaviorSet = Static<typeof BehaviorSetSchema>;

const aliases: AliasSpec = {
  aliases: { ruleGroups: 'behaviorGroups' },
  fields: { behaviorGroups: { aliases: { rules: 'behaviorRules' } } },
};

// ---------------------------------------------------------------------------------------------------------------
// Semantic checks: what instantiating each condition would refuse (BEHAVIOUR 4.1, 4.3)
// ---------------------------------------------------------------------------------------------------------------

const INTEGER_TEXT = /^-?\d+$/;

interface ConditionContext {
  readonly rule: string;
  readonly ruleNames: ReadonlySet<string>;
  readonly problems: SemanticProblem[];
}

function checkCondition(condition: JsonObject, path: string, depth: number, context: ConditionContext): void {
  const type = String(condition['type']);
  const configs = isRecord(condition['configs']) ? (condition['configs'] as Record<string, string>) : {};
  const configsPath = fieldPath(path, 'configs');
  const children = Array.isArray(condition['conditions']) ? (condition['conditions'] as unknown[]) : [];
  const report = (at: string, what: string) =>
    context.problems.push({ path: at, message: `Invalid '${type}' condition in behavior rule '${context.rule}' at ${path}: ${what}` });
  const need = (key: string, what = `needs a non-blank '${key}' config.`) => {
    if (isBlank(configs[key])) report(fieldPath(configsPath, key), what);
  };
  const oneOf = (key: string, allowed: readonly string[]) => {
    const value = configs[key];
    if (value !== undefined && !allowed.includes(value)) {
      report(fieldPath(configsPath, key), `'${key}' is '${value}'; allowed: ${allowed.join(', ')}.`);
    }
  };
  const integer = (key: string) => {
    const value = configs[key];
    if (value !== undefined && !INTEGER_TEXT.test(value.trim())) report(fieldPath(configsPath, key), `'${key}' must be an integer written as text, not '${value}'.`);
  };

  switch (type) {
    case 'inputmatcher':
      need('expressions');
      oneOf('occurrence', OCCURRENCES);
      break;
    case 'actionmatcher':
      need('actions');
      oneOf('occurrence', OCCURRENCES);
      break;
    case 'occurrence':
      need('behaviorRuleName');
      if (configs['minTimesOccurred'] === undefined && configs['maxTimesOccurred'] === undefined) {
        report(configsPath, "needs 'minTimesOccurred' or 'maxTimesOccurred' (or both).");
      }
      integer('minTimesOccurred');
      integer('maxTimesOccurred');
      break;
    case 'contextmatcher':
      need('contextKey');
      if (isBlank(configs['contextType'])) need('contextType', `needs a 'contextType' config (${CONTEXT_TYPES.join(', ')}).`);
      else oneOf('contextType', CONTEXT_TYPES);
      break;
    case 'negation':
    case 'connector':
      if (children.length === 0) report(fieldPath(path, 'conditions'), "needs at least one nested condition in 'conditions'.");
      if (type === 'connector') oneOf('operator', CONNECTOR_OPERATORS);
      break;
    case 'dependency':
      need('reference');
      if (!isBlank(configs['reference']) && !context.ruleNames.has(configs['reference']!)) {
        report(fieldPath(configsPath, 'reference'), `no behavior rule named '${configs['reference']}' exists in this set.`);
      }
      break;
    case 'sizematcher':
      integer('min');
      integer('max');
      integer('equal');
      break;
    case 'dynamicvaluematcher':
      break;
    default:
      context.problems.push({
        path: fieldPath(path, 'type'),
        message: `Unknown condition type '${type}' at ${fieldPath(path, 'type')} in behavior rule '${context.rule}'; known types: ${CONDITION_TYPES.join(', ')}.`,
      });
  }

  if (children.length > 0 && depth >= MAX_CONDITION_DEPTH) {
    const at = fieldPath(path, 'conditions');
    context.problems.push({ path: at, message: `Conditions may be nested at most ${MAX_CONDITION_DEPTH} levels deep (${at}).` });
    return;
  }
  children.forEach((child, i) => {
    if (isRecord(child)) checkCondition(child, indexPath(fieldPath(path, 'conditions'), i), depth + 1, context);
  });
}

function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  const groups = arrayField(body, 'behaviorGroups');
  const ruleNames = new Set(groups.flatMap((group) => arrayField(group, 'behaviorRules').map((rule) => String(rule['name']))));
  groups.forEach((group, g) => {
    const groupPath = indexPath('$.behaviorGroups', g);
    arrayField(group, 'behaviorRules').forEach((rule, r) => {
      const rulePath = indexPath(fieldPath(groupPath, 'behaviorRules'), r);
      const context: ConditionContext = { rule: String(rule['name']), ruleNames, problems };
      arrayField(rule, 'conditions').forEach((condition, c) => checkCondition(condition, indexPath(fieldPath(rulePath, 'conditions'), c), 1, context));
    });
  });
  return problems;
}

export const behaviorKind: ResourceKindDefinition = {
  ...kindNamed('behavior'),
  schema: BehaviorSetSchema,
  renameAliases: aliasRenamer(aliases, BehaviorSetSchema),
  checkSemantics,
};
