import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { aliasRenamer, closed, indexPath, stringEnum } from './common.ts';
import { isId } from '../../ids.ts';
import { normalizeEnvironment } from '../../runtime/deployments.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * A group (issue 18): agents that discuss a question in a style (the original's names), each through its own
 * normal pipeline, and a moderator agent that synthesises. `src/groups/` runs the discussions.
 */

export const DISCUSSION_STYLES = [
  'ROUND_TABLE',
  'PEER_REVIEW',
  'DEVIL_ADVOCATE',
  'DELPHI',
  'DEBATE',
  'TASK_FORCE',
  'NEGOTIATION',
  'CUSTOM',
] as const;
export type DiscussionStyle = (typeof DISCUSSION_STYLES)[number];

export const PHASE_TYPES = [
  'OPINION',
  'CRITIQUE',
  'REVISION',
  'CHALLENGE',
  'DEFENSE',
  'ARGUE',
  'REBUTTAL',
  'SYNTHESIS',
] as const;
export type PhaseType = (typeof PHASE_TYPES)[number];

export const CONTEXT_SCOPES = ['NONE', 'FULL', 'LAST_PHASE', 'ANONYMOUS', 'OWN_FEEDBACK'] as const;
export type ContextScope = (typeof CONTEXT_SCOPES)[number];

export const MEMBER_ROLES = ['DEVIL_ADVOCATE', 'PRO', 'CON'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const MemberSchema = closed(
  {
    agentId: Type.String({ description: 'The member agent (USE access needed to write the group).' }),
    displayName: Type.String({ description: 'How the member is named in the transcript and to the others.' }),
    speakingOrder: Type.Optional(
      Type.Integer({ description: 'Members speak in ascending order (then in list order); default: list order.' }),
    ),
    role: Type.Optional(stringEnum(MEMBER_ROLES, 'DEVIL_ADVOCATE (style DEVIL_ADVOCATE), PRO or CON (style DEBATE).')),
  },
  { description: 'A member of the group.' },
);
export type Member = Static<typeof MemberSchema>;

export const PhaseSchema = closed(
  {
    name: Type.String({ description: 'Shown in the transcript.' }),
    type: stringEnum(PHASE_TYPES, 'What the participants are asked to do.'),
    participants: Type.Optional(
      stringEnum(
        ['ALL', 'MODERATOR', 'DEVIL_ADVOCATE', 'PRO', 'CON'] as const,
        'ALL members (default), the MODERATOR, or the members of a role.',
      ),
    ),
    turnOrder: Type.Optional(
      stringEnum(['SEQUENTIAL', 'PARALLEL'] as const, 'SEQUENTIAL (default: in speaking order) or PARALLEL.'),
    ),
    contextScope: Type.Optional(
      stringEnum(
        CONTEXT_SCOPES,
        'What a participant sees besides the question: NONE, FULL (default: everything said so far), LAST_PHASE, ANONYMOUS (the last phase without names), OWN_FEEDBACK (critiques of its own answer).',
      ),
    ),
    targetEachPeer: Type.Optional(
      Type.Boolean({ description: 'CRITIQUE: one review per other member instead of one of all (default false).' }),
    ),
    instruction: Type.Optional(
      Type.String({ description: "What the participants are asked (default: the phase type's instruction)." }),
    ),
  },
  { description: 'One phase of a CUSTOM discussion.' },
);
export type Phase = Static<typeof PhaseSchema>;

export const GroupSchema = closed(
  {
    name: Type.Optional(Type.String({ description: 'A name for the group (the descriptor has one too).' })),
    members: Type.Array(MemberSchema, { minItems: 1, maxItems: 20, description: 'The members.' }),
    moderatorAgentId: Type.String({ description: 'The agent that synthesises (USE access needed).' }),
    style: stringEnum(DISCUSSION_STYLES, 'The discussion style; CUSTOM takes `phases`.'),
    maxRounds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10,
        description: 'How often the style repeats its exchange before the synthesis (default 1; Delphi at least 2).',
      }),
    ),
    phases: Type.Optional(Type.Array(PhaseSchema, { minItems: 1, description: 'CUSTOM only: the phases, in order.' })),
    environment: Type.Optional(
      Type.String({ description: 'Where the agents are deployed: production (default) or test.' }),
    ),
    protocol: Type.Optional(
      closed(
        {
          agentTimeoutSeconds: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 3600,
              description:
                'A member that has not answered by then is reported as TIMEOUT and left out of the rest of the discussion (default 60).',
            }),
          ),
        },
        { description: 'How members are waited for.' },
      ),
    ),
  },
  { description: 'Agents that discuss a question, and a moderator that synthesises.' },
);
export type Group = Static<typeof GroupSchema>;

export const groupKind: ResourceKindDefinition = {
  ...kindNamed('group'),
  schema: GroupSchema,
  renameAliases: aliasRenamer({}, GroupSchema),
  agentTargets: (body) =>
    isRecord(body)
      ? [
          ...(Array.isArray(body.members) ? body.members : []).flatMap((member, i) =>
            isRecord(member) && typeof member.agentId === 'string'
              ? [{ path: `${indexPath('$.members', i)}.agentId`, agentId: member.agentId }]
              : [],
          ),
          ...(typeof body.moderatorAgentId === 'string'
            ? [{ path: '$.moderatorAgentId', agentId: body.moderatorAgentId }]
            : []),
        ]
      : [],
  checkSemantics: (body) => (isRecord(body) ? groupProblems(body as Group) : []),
};

function groupProblems(group: Group): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  group.members.forEach((member, i) => {
    if (!isId(member.agentId))
      problems.push({ path: `${indexPath('$.members', i)}.agentId`, message: 'agentId must be an agent id (24 hex).' });
  });
  if (!isId(group.moderatorAgentId))
    problems.push({ path: '$.moderatorAgentId', message: 'moderatorAgentId must be an agent id (24 hex).' });
  try {
    normalizeEnvironment(group.environment);
  } catch (error) {
    problems.push({ path: '$.environment', message: (error as Error).message });
  }
  const withRole = (role: MemberRole) => group.members.some((member) => member.role === role);
  if (group.style === 'CUSTOM') {
    if (group.phases === undefined) problems.push({ path: '$.phases', message: 'A CUSTOM group lists its phases.' });
    if (group.maxRounds !== undefined)
      problems.push({
        path: '$.maxRounds',
        message: 'A CUSTOM group runs its phases as listed; maxRounds is not read.',
      });
    for (const [i, phase] of (group.phases ?? []).entries()) {
      const role = phase.participants;
      if (role === 'DEVIL_ADVOCATE' || role === 'PRO' || role === 'CON') {
        if (!withRole(role))
          problems.push({
            path: `${indexPath('$.phases', i)}.participants`,
            message: `No member has the role ${role}.`,
          });
      }
    }
  } else if (group.phases !== undefined) {
    problems.push({ path: '$.phases', message: `phases are read only with style CUSTOM, not ${group.style}.` });
  }
  if (group.style === 'DEVIL_ADVOCATE' && !withRole('DEVIL_ADVOCATE'))
    problems.push({ path: '$.members', message: 'Style DEVIL_ADVOCATE needs a member with role DEVIL_ADVOCATE.' });
  if (group.style === 'DEVIL_ADVOCATE' && group.members.every((member) => member.role === 'DEVIL_ADVOCATE'))
    problems.push({ path: '$.members', message: 'Style DEVIL_ADVOCATE needs a member to challenge.' });
  if (group.style === 'DEBATE' && (!withRole('PRO') || !withRole('CON')))
    problems.push({ path: '$.members', message: 'Style DEBATE needs a member with role PRO and one with role CON.' });
  return problems;
}
