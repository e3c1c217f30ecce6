import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  canonicalReference,
  checkReference,
  closed,
  indexPath,
  stringMap,
  type AliasSpec,
} from './common.ts';
import { isRecord } from '../../shared/json.ts';

export const ChannelSchema = closed(
  {
    type: Type.String({ description: 'Channel type URI, e.g. a messaging-platform channel.' }),
    config: Type.Optional(
      stringMap(
        'Channel settings; for the messaging-platform channel appSecret, verificationToken and pageAccessToken (secrets).',
      ),
    ),
  },
  { description: 'A channel the agent is reachable on.' },
);

export const AgentSchema = closed(
  {
    packages: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Workflow references (svc://ai.svc.package/packagestore/packages/<id>?version=<n>); every workflow runs every turn, in order.',
      }),
    ),
    channels: Type.Optional(Type.Array(ChannelSchema, { description: 'Channels.' })),
    description: Type.Optional(Type.String({ description: 'What the agent does (shown on its agent-to-agent card).' })),
    a2aEnabled: Type.Optional(Type.Boolean({ description: 'Expose the agent over agent-to-agent (default false).' })),
    a2aSkills: Type.Optional(Type.Array(Type.String(), { description: 'Skills listed on the agent-to-agent card.' })),
  },
  { title: 'Agent', description: 'An agent: an ordered list of workflows.' },
);
export type Agent = Static<typeof AgentSchema>;

const aliases: AliasSpec = {
  aliases: { workflows: 'packages' },
  fields: { packages: { value: canonicalReference } },
};

function checkSemantics(body: unknown): SemanticProblem[] {
  if (!isRecord(body) || !Array.isArray(body.packages)) return [];
  return body.packages.flatMap((uri, i) => checkReference(uri, indexPath('$.packages', i), ['workflow']) ?? []);
}

export const agentKind: ResourceKindDefinition = {
  ...kindNamed('agent'),
  schema: AgentSchema,
  renameAliases: aliasRenamer(aliases, AgentSchema),
  checkSemantics,
  references: (body) =>
    isRecord(body) && Array.isArray(body.packages)
      ? body.packages.map((_, i) => ({ path: ['packages', i], kind: 'workflow' as const }))
      : [],
};
