import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  checkPropertyInstructions,
  checkSetOnActions,
  closed,
  PropertyInstructionList,
  SetOnActionList,
} from './common.ts';
import { isRecord } from '../../shared/json.ts';

export const PropertySetterSchema = closed(
  {
    propertyInstructions: Type.Optional(PropertyInstructionList),
    setOnActions: Type.Optional(SetOnActionList),
  },
  {
    title: 'PropertySetter',
    description:
      "A property setter: 'propertyInstructions' run on every turn; 'setOnActions' entries run their instructions for each matching action of the step.",
  },
);
export type PropertySetter = Static<typeof PropertySetterSchema>;

function checkSemantics(body: unknown): SemanticProblem[] {
  if (!isRecord(body)) return [];
  return [
    ...checkPropertyInstructions(body.propertyInstructions, '$.propertyInstructions'),
    ...checkSetOnActions(body.setOnActions, '$.setOnActions'),
  ];
}

export const propertyKind: ResourceKindDefinition = {
  ...kindNamed('property'),
  schema: PropertySetterSchema,
  renameAliases: aliasRenamer({}, PropertySetterSchema),
  checkSemantics,
};
