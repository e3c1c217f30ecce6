import { Type, type Static } from '@sinclair/typebox';
import { closed } from '../resources/schemas/common.ts';
import {
  MEMORY_CATEGORIES,
  MEMORY_VISIBILITIES,
  type MemoryCategory,
  type MemoryVisibility,
} from '../storage/user-memory-ports.ts';

/**
 * An agent's user-memory settings (`enableMemoryTools`, `userMemoryConfig`; the original's field names): the
 * memory tools its LLM tasks get, and the caps and guardrails those tools obey.
 */

const visibility = (description: string) =>
  Type.Union(
    MEMORY_VISIBILITIES.map((name) => Type.Literal(name)),
    { description },
  );
const category = Type.Union(MEMORY_CATEGORIES.map((name) => Type.Literal(name)));

export const UserMemoryGuardrailsSchema = closed(
  {
    maxKeyLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 255, description: 'Longest key (default 100).' })),
    maxValueLength: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65_536, description: 'Longest value in characters (default 1000).' }),
    ),
    maxWritesPerTurn: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Remember/forget calls per turn (default 10); re-saving an unchanged fact does not count.',
      }),
    ),
    allowedCategories: Type.Optional(
      Type.Array(category, { description: 'Categories the model may write (default preference, fact, context).' }),
    ),
    allowedVisibilities: Type.Optional(
      Type.Array(visibility('a visibility'), {
        description: "Visibilities the model may write (default ['self']; the defaultVisibility is always allowed).",
      }),
    ),
    allowGlobalKeyOverwrite: Type.Optional(
      Type.Boolean({
        description:
          'Whether a global write or forget may replace a global entry another agent wrote (default false: refused).',
      }),
    ),
  },
  { description: 'Limits on what the model writes through the memory tools.' },
);

export const UserMemoryConfigSchema = closed(
  {
    maxEntriesPerUser: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Entries one user may have in all (default 500).' }),
    ),
    maxRecallEntries: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Entries a recall or search hands to the model (default 50).' }),
    ),
    recallOrder: Type.Optional(
      Type.Union([Type.Literal('most_recent'), Type.Literal('most_accessed')], {
        description: 'most_recent (by last write, default) or most_accessed (by recall count).',
      }),
    ),
    onCapReached: Type.Optional(
      Type.Union([Type.Literal('evict_oldest'), Type.Literal('reject')], {
        description:
          "At maxEntriesPerUser: evict_oldest (delete this agent's oldest entries, default) or reject the new entry.",
      }),
    ),
    defaultVisibility: Type.Optional(
      visibility("Visibility of a fact the model remembers without naming one (default 'self')."),
    ),
    guardrails: Type.Optional(UserMemoryGuardrailsSchema),
  },
  { description: 'How the memory tools of this agent behave.' },
);
export type UserMemoryConfig = Static<typeof UserMemoryConfigSchema>;

/** The settings with every default applied. */
export interface UserMemorySettings {
  readonly maxEntriesPerUser: number;
  readonly maxRecallEntries: number;
  readonly recallOrder: 'most_recent' | 'most_accessed';
  readonly onCapReached: 'evict_oldest' | 'reject';
  readonly defaultVisibility: MemoryVisibility;
  readonly maxKeyLength: number;
  readonly maxValueLength: number;
  readonly maxWritesPerTurn: number;
  readonly allowedCategories: ReadonlySet<MemoryCategory>;
  readonly allowedVisibilities: ReadonlySet<MemoryVisibility>;
  readonly allowGlobalKeyOverwrite: boolean;
}

export function userMemorySettings(config: UserMemoryConfig | undefined): UserMemorySettings {
  const guardrails = config?.guardrails;
  const defaultVisibility = config?.defaultVisibility ?? 'self';
  return {
    maxEntriesPerUser: config?.maxEntriesPerUser ?? 500,
    maxRecallEntries: config?.maxRecallEntries ?? 50,
    recallOrder: config?.recallOrder ?? 'most_recent',
    onCapReached: config?.onCapReached ?? 'evict_oldest',
    defaultVisibility,
    maxKeyLength: guardrails?.maxKeyLength ?? 100,
    maxValueLength: guardrails?.maxValueLength ?? 1000,
    maxWritesPerTurn: guardrails?.maxWritesPerTurn ?? 10,
    allowedCategories: new Set(guardrails?.allowedCategories ?? ['preference', 'fact', 'context']),
    allowedVisibilities: new Set([...(guardrails?.allowedVisibilities ?? ['self']), defaultVisibility]),
    allowGlobalKeyOverwrite: guardrails?.allowGlobalKeyOverwrite ?? false,
  };
}

/** What an agent says about user memory, as the deployment hands it to its tasks. */
export interface AgentMemoryOptions {
  /** `enableMemoryTools`: the agent's LLM tasks with built-in tools get the memory tools. */
  readonly toolsEnabled: boolean;
  readonly settings: UserMemorySettings;
}

export function agentMemoryOptions(agent: {
  readonly enableMemoryTools?: boolean | undefined;
  readonly userMemoryConfig?: UserMemoryConfig | undefined;
}): AgentMemoryOptions {
  return { toolsEnabled: agent.enableMemoryTools === true, settings: userMemorySettings(agent.userMemoryConfig) };
}
