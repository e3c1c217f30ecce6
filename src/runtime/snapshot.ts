import { Type, type Static } from '@sinclair/typebox';
import { CONVERSATION_STATES } from '../storage/runtime-ports.ts';
import { canRedo, canUndo, type Conversation, type StepEntry, type StoredStep } from './memory.ts';
import { TURN_ERROR_KEY } from './pipeline.ts';

/**
 * The conversation response model (spec "Conversation (response model)", DESIGN §4.3). `output` is a list of
 * strings (the texts of the text items); the full items are in the step data of a detailed response.
 */
export interface SnapshotOptions {
  /** Every step entry and output key (true), or only the public parts: input, actions, output, quick replies. */
  readonly returnDetailed: boolean;
  /** Only the last step (true) or every step since the start. */
  readonly returnCurrentStepOnly: boolean;
  /** `/bots/...` paths answer with `botId`/`botVersion`, the others with `agentId`/`agentVersion`. */
  readonly naming?: 'agent' | 'bot';
}

const PUBLIC_OUTPUT_KEYS = new Set(['input', 'actions', 'output', 'quickReplies', TURN_ERROR_KEY]);

function isPublicEntry(entry: StepEntry): boolean {
  return (
    entry.key === 'input:initial' ||
    entry.key === TURN_ERROR_KEY ||
    entry.key.startsWith('actions') ||
    entry.key.startsWith('output') ||
    entry.key.startsWith('quickReplies')
  );
}

/** The texts of the text items of an output list. */
export function outputTexts(items: unknown): string[] {
  if (!Array.isArray(items)) return [];
  const texts: string[] = [];
  for (const item of items) {
    if (typeof item === 'string') texts.push(item);
    else if (item && typeof item === 'object' && (item as { type?: unknown }).type === 'text')
      texts.push(String((item as { text?: unknown }).text ?? ''));
  }
  return texts;
}

function conversationOutput(step: StoredStep, detailed: boolean): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(step.output)) {
    if (!detailed && !PUBLIC_OUTPUT_KEYS.has(key)) continue;
    result[key] = key === 'output' ? outputTexts(value) : value;
  }
  return result;
}

function conversationStep(step: StoredStep, detailed: boolean): Static<typeof ConversationStepSchema> {
  const entries = detailed ? step.entries : step.entries.filter(isPublicEntry);
  return {
    conversationStep: entries.map((entry) =>
      entry.originWorkflowId === undefined
        ? { key: entry.key, value: entry.value, timestamp: entry.timestamp }
        : { key: entry.key, value: entry.value, timestamp: entry.timestamp, originWorkflowId: entry.originWorkflowId },
    ),
    timestamp: step.timestamp,
  };
}

/*
 * The response schemas, which Fastify's serialiser writes: exactly the shape built above (a property the schema
 * does not name would be dropped). Step data, outputs and property values are open-ended.
 */
const ConversationStepSchema = Type.Object({
  conversationStep: Type.Array(
    Type.Object({
      key: Type.String(),
      value: Type.Optional(Type.Unknown()),
      timestamp: Type.Integer({ description: 'epoch milliseconds' }),
      originWorkflowId: Type.Optional(Type.String()),
    }),
  ),
  timestamp: Type.Integer({ description: 'epoch milliseconds' }),
});

const snapshotProperties = {
  userId: Type.String(),
  environment: Type.String(),
  conversationState: Type.Union(CONVERSATION_STATES.map((state) => Type.Literal(state))),
  undoAvailable: Type.Boolean(),
  redoAvailable: Type.Boolean(),
  conversationOutputs: Type.Array(
    Type.Object(
      { output: Type.Optional(Type.Array(Type.String(), { description: 'the texts of the text output items' })) },
      {
        additionalProperties: true,
        description:
          'per step: input, actions, output, quickReplies, error (why the turn failed); every output key when detailed',
      },
    ),
  ),
  conversationProperties: Type.Record(
    Type.String(),
    Type.Object({
      name: Type.String(),
      value: Type.Optional(Type.Unknown()),
      scope: Type.String(),
    }),
  ),
  conversationSteps: Type.Array(ConversationStepSchema, {
    description: 'the public step entries (every entry when detailed)',
  }),
  hitlPausedAt: Type.Optional(
    Type.Integer({ description: 'While AWAITING_HUMAN: when the turn started waiting for a person (epoch ms)' }),
  ),
  hitlPauseType: Type.Optional(
    Type.String({ description: 'While AWAITING_HUMAN: pause (a rule) or tool-approval (tool calls wait)' }),
  ),
  hitlPendingToolCalls: Type.Optional(
    Type.Array(
      Type.Object({
        toolCallId: Type.String(),
        tool: Type.String(),
        arguments: Type.Record(Type.String(), Type.Unknown()),
      }),
      { description: 'While AWAITING_HUMAN: the tool calls waiting for approval' },
    ),
  ),
  hitlQueuedMessages: Type.Optional(
    Type.Integer({ description: 'Messages that arrived while the turn waited; they run after the decision' }),
  ),
  error: Type.Optional(
    Type.String({
      description:
        'While conversationState is ERROR: why the last turn failed (the task and what went wrong, never a secret); also the step entry and step output `error`',
    }),
  ),
};

export const ConversationSnapshotSchema = Type.Object(
  { conversationId: Type.String(), agentId: Type.String(), agentVersion: Type.Integer(), ...snapshotProperties },
  { title: 'Conversation', description: 'The conversation (spec "Conversation (response model)")' },
);

/** The same model on the `/bots/...` paths, which name the agent `botId`/`botVersion`. */
export const BotConversationSnapshotSchema = Type.Object(
  { conversationId: Type.String(), botId: Type.String(), botVersion: Type.Integer(), ...snapshotProperties },
  { title: 'BotConversation', description: 'The conversation, naming the agent botId/botVersion' },
);

export type ConversationSnapshot = Static<typeof ConversationSnapshotSchema>;
export type BotConversationSnapshot = Static<typeof BotConversationSnapshotSchema>;

/** `{error}` with the reason the last turn failed, while the conversation is in ERROR. */
function failureOf(conversation: Conversation): { error?: string } {
  if (conversation.state !== 'ERROR') return {};
  const reason = conversation.steps.at(-1)?.entries.find((entry) => entry.key === TURN_ERROR_KEY)?.value;
  return typeof reason === 'string' ? { error: reason } : {};
}

/** The human-in-the-loop fields, while a turn waits for a person (or messages queued then still wait). */
function waitingOf(conversation: Conversation) {
  const queued = conversation.queued?.length ?? 0;
  const pending = conversation.pending;
  return {
    ...(pending
      ? { hitlPausedAt: pending.pausedAt, hitlPauseType: pending.kind, hitlPendingToolCalls: [...pending.toolCalls] }
      : {}),
    ...(queued > 0 ? { hitlQueuedMessages: queued } : {}),
  };
}

export function snapshot(
  conversation: Conversation,
  options: SnapshotOptions & { readonly naming: 'bot' },
): BotConversationSnapshot;
export function snapshot(
  conversation: Conversation,
  options: SnapshotOptions & { readonly naming?: 'agent' },
): ConversationSnapshot;
export function snapshot(
  conversation: Conversation,
  options: SnapshotOptions,
): ConversationSnapshot | BotConversationSnapshot {
  const steps = options.returnCurrentStepOnly ? conversation.steps.slice(-1) : conversation.steps;
  const properties: ConversationSnapshot['conversationProperties'] = {};
  for (const property of Object.values(conversation.properties)) {
    properties[property.name] = { name: property.name, value: property.value, scope: property.scope };
  }
  const rest = {
    userId: conversation.userId,
    environment: conversation.environment,
    conversationState: conversation.state,
    undoAvailable: canUndo(conversation),
    redoAvailable: canRedo(conversation),
    conversationOutputs: steps.map((step) => conversationOutput(step, options.returnDetailed)),
    conversationProperties: properties,
    conversationSteps: steps.map((step) => conversationStep(step, options.returnDetailed)),
    ...failureOf(conversation),
    ...waitingOf(conversation),
  };
  return options.naming === 'bot'
    ? { conversationId: conversation.id, botId: conversation.agentId, botVersion: conversation.agentVersion, ...rest }
    : {
        conversationId: conversation.id,
        agentId: conversation.agentId,
        agentVersion: conversation.agentVersion,
        ...rest,
      };
}
