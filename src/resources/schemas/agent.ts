import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  canonicalReference,
  checkReference,
  closed,
  fieldPath,
  indexPath,
  stringMap,
  type AliasSpec,
} from './common.ts';
import { canonicalExtensionType } from '../uri.ts';
import { isRecord } from '../../shared/json.ts';
import { SECRET_PARAMETER } from '../../security/secret-scrubbing.ts';
import { VAULT_REFERENCE } from '../../security/secret-references.ts';
import { UserMemoryConfigSchema } from '../../user-memory/config.ts';

export const ChannelSchema = closed(
  {
    type: Type.String({ description: 'Channel type URI, e.g. a messaging-platform channel.' }),
    config: Type.Optional(
      stringMap(
        'Channel settings; for the messaging-platform channel appSecret, verificationToken and pageAccessToken: secrets, given only as vault references ${vault:NAME} (never stored or returned in clear).',
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
    enableMemoryTools: Type.Optional(
      Type.Boolean({
        description:
          "Give the agent's LLM tasks with built-in tools the memory tools rememberFact, recallMemories, searchMemory and forgetFact (default false).",
      }),
    ),
    userMemoryConfig: Type.Optional(UserMemoryConfigSchema),
  },
  { title: 'Agent', description: 'An agent: an ordered list of workflows.' },
);
export type Agent = Static<typeof AgentSchema>;

const aliases: AliasSpec = {
  aliases: { workflows: 'packages' },
  fields: {
    packages: { value: canonicalReference },
    channels: { fields: { type: { value: canonicalExtensionType } } },
  },
};

/**
 * Channel settings named like a credential (`appSecret`, `verificationToken`, `pageAccessToken`, ...) hold vault
 * references only (or nothing): a literal would be stored and returned in clear like any other agent field.
 */
function checkChannelSecrets(channels: unknown): SemanticProblem[] {
  if (!Array.isArray(channels)) return [];
  return channels.flatMap((channel, i) => {
    if (!isRecord(channel) || !isRecord(channel.config)) return [];
    const at = fieldPath(indexPath('$.channels', i), 'config');
    return Object.entries(channel.config)
      .filter(([name, value]) => SECRET_PARAMETER.test(name) && typeof value === 'string')
      .filter(([, value]) => (value as string).replace(VAULT_REFERENCE, '').trim() !== '')
      .map(([name]) => ({
        path: fieldPath(at, name),
        message: `The channel secret ${fieldPath(at, name)} must be a vault reference \${vault:NAME}: store the value with PUT /secretstore/secrets/default/<NAME> and give its reference (secrets are never kept in clear).`,
      }));
  });
}

function checkSemantics(body: unknown): SemanticProblem[] {
  if (!isRecord(body)) return [];
  const packages = Array.isArray(body.packages) ? body.packages : [];
  return [
    ...packages.flatMap((uri, i) => checkReference(uri, indexPath('$.packages', i), ['workflow']) ?? []),
    ...checkChannelSecrets(body.channels),
  ];
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
