import { canRedo, canUndo, type Conversation, type StepEntry, type StoredStep } from './memory.ts';

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

const PUBLIC_OUTPUT_KEYS = new Set(['input', 'actions', 'output', 'quickReplies']);

function isPublicEntry(entry: StepEntry): boolean {
  return entry.key === 'input:initial' || entry.key.startsWith('actions') || entry.key.startsWith('output') || entry.key.startsWith('quickReplies');
}

function outputTexts(items: unknown): string[] {
  if (!Array.isArray(items)) return [];
  const texts: string[] = [];
  for (const item of items) {
    if (typeof item === 'string') texts.push(item);
    else if (item && typeof item === 'object' && (item as { type?: unknown }).type === 'text') texts.push(String((item as { text?: unknown }).text ?? ''));
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

function conversationStep(step: StoredStep, detailed: boolean) {
  const entries = detailed ? step.entries : step.entries.filter(isPublicEntry);
  return {
    conversationStep: entries.map((entry) =>
      entry.originWorkflowId === undefined
        ? { key: entry.key, value: entry.value, timestamp: entry.timestamp }
        : { key: entry.key, value: entry.value, timestamp: entry.timestamp, originWorkflowId: entry.originWorkflowId }),
    timestamp: step.timestamp,
  };
}

export function snapshot(conversation: Conversation, options: SnapshotOptions): Record<string, unknown> {
  const steps = options.returnCurrentStepOnly ? conversation.steps.slice(-1) : conversation.steps;
  const [idName, versionName] = options.naming === 'bot' ? ['botId', 'botVersion'] : ['agentId', 'agentVersion'];
  const properties: Record<string, unknown> = {};
  for (const property of Object.values(conversation.properties)) {
    properties[property.name] = { name: property.name, value: property.value, scope: property.scope };
  }
  return {
    conversationId: conversation.id,
    [idName]: conversation.agentId,
    [versionName]: conversation.agentVersion,
    userId: conversation.userId,
    environment: conversation.environment,
    conversationState: conversation.state,
    undoAvailable: canUndo(conversation),
    redoAvailable: canRedo(conversation),
    conversationOutputs: steps.map((step) => conversationOutput(step, options.returnDetailed)),
    conversationProperties: properties,
    conversationSteps: steps.map((step) => conversationStep(step, options.returnDetailed)),
  };
}
