import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { compileBehaviorSet } from '../../tasks/behavior/behavior-task.ts';
import { MAX_CONDITION_DEPTH } from '../../tasks/behavior/conditions.ts';
import { conditionTypes } from '../../tasks/behavior/conditions/index.ts';
import { aliasRenamer, closed, stringEnum, stringMap, type AliasSpec } from './common.ts';

export interface BehaviorCondition {
  type: string;
  configs?: Record<string, string>;
  conditions?: BehaviorCondition[];
}

const CONDITION_NAMES = conditionTypes.map((type) => type.name).join(', ');

/**
 * The condition schema, unrolled to a fixed depth so that it needs no `$id`/`$ref`; each condition type's
 * `configs` are described by its own module (values are text; keys it does not read are left alone).
 */
function conditionSchema(level: number): TSchema {
  const nested =
    level < MAX_CONDITION_DEPTH
      ? Type.Array(conditionSchema(level + 1), { description: 'Child conditions (negation, connector).' })
      : Type.Array(Type.Unknown(), {
          description: `Child conditions; nesting deeper than ${MAX_CONDITION_DEPTH} levels is refused.`,
        });
  const properties = {
    type: Type.String({ description: `Condition type: ${CONDITION_NAMES}.` }),
    configs: Type.Optional(stringMap('Parameters of the condition, all values as text.')),
    conditions: Type.Optional(nested),
  };
  return Type.Unsafe({
    ...closed(properties, {
      description: `A rule condition. 'type' is one of ${CONDITION_NAMES}; 'configs' holds its parameters as text (numbers too, e.g. "maxTimesOccurred": "0"); 'conditions' nests child conditions (negation, connector).`,
    }),
    allOf: conditionTypes.map((type) => ({
      if: { type: 'object', required: ['type'], properties: { type: { const: type.name } } },
      then: { properties: { configs: type.configSchema } },
    })),
  });
}

export const BehaviorConditionSchema = Type.Unsafe<BehaviorCondition>(conditionSchema(1));

export const BehaviorRuleSchema = closed(
  {
    name: Type.String({ description: "Rule name; 'occurrence' and 'dependency' conditions refer to rules by name." }),
    actions: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "Actions produced when the rule matches; CONVERSATION_START and CONVERSATION_END are reserved; 'httpcall(<name>)' triggers the HTTP call of that name.",
      }),
    ),
    conditions: Type.Optional(
      Type.Array(BehaviorConditionSchema, {
        description: 'The rule matches when all its conditions hold (no conditions: always).',
      }),
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
    behaviorGroups: Type.Optional(
      Type.Array(BehaviorGroupSchema, { description: 'Groups of rules, evaluated in order.' }),
    ),
    appendActions: Type.Optional(
      Type.Boolean({
        description:
          "Append the produced actions to the step's actions (default true); the workflow extension's config overrides it.",
      }),
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

/** What deploying the set would refuse: a dry run of the same compilation, every problem with its JSON path. */
function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  compileBehaviorSet(body, (problem) => problems.push({ path: problem.path, message: problem.message }));
  return problems;
}

export const behaviorKind: ResourceKindDefinition = {
  ...kindNamed('behavior'),
  schema: BehaviorSetSchema,
  renameAliases: aliasRenamer(aliases, BehaviorSetSchema),
  checkSemantics,
};
