import { formatExpression, parseExpressions, type Expression } from '../expressions/expressions.ts';
import type { ConversationRow } from '../storage/runtime-ports.ts';
import type { PendingTurn, QueuedMessage } from './human-approval.ts';

/**
 * Conversation memory: steps with keyed data, the per-step conversation output (the public projection),
 * properties with scopes, and the redo stack. A finished step never changes; a turn builds a new one.
 */

export type PropertyScope = 'step' | 'conversation' | 'longTerm';

export interface Property {
  readonly name: string;
  readonly value: unknown;
  readonly scope: PropertyScope;
}

export type ContextType = 'string' | 'expressions' | 'object' | 'array';

export interface ContextValue {
  readonly type: ContextType;
  readonly value: unknown;
}

export interface StepEntry {
  readonly key: string;
  readonly value: unknown;
  readonly timestamp: number;
  readonly originWorkflowId?: string;
  /** Public entries are the ones a non-detailed response shows. */
  readonly public: boolean;
}

export interface StoredStep {
  /** In insertion order; a key appears once (a rewrite keeps the original position). */
  readonly entries: readonly StepEntry[];
  /** The conversation output of the step, keys in insertion order. */
  readonly output: Readonly<Record<string, unknown>>;
  readonly timestamp: number;
  /** Conversation and long-term properties as they were when the step ended; undo restores them. */
  readonly properties: Readonly<Record<string, Property>>;
  /** The message request that made the step, when its client named it (`Idempotency-Key`): its retries answer this step. */
  readonly request?: KeyedRequest;
}

/** What a retry of a message request is checked against and answered from. */
export interface KeyedRequest {
  readonly idempotencyKey: string;
  /** SHA-256 of the message (input and context): the same key with another message is refused. */
  readonly fingerprint: string;
  /** The conversation state the turn left (the `conversationState` of its answer). */
  readonly state: ConversationRow['state'];
}

/**
 * Per-conversation tallies kept up to date with every step so that no task needs to walk the history:
 * how many steps produced each action, how often each behavior rule succeeded, how many steps carried each
 * parsed expression (canonical text).
 */
export interface Tallies {
  readonly actions: Readonly<Record<string, number>>;
  readonly rules: Readonly<Record<string, number>>;
  readonly expressions: Readonly<Record<string, number>>;
}

export const RESERVED_ACTIONS = {
  start: 'CONVERSATION_START',
  end: 'CONVERSATION_END',
  stop: 'STOP_CONVERSATION',
  /** A task added it: the turn waits for a person (human in the loop). */
  pause: 'PAUSE_CONVERSATION',
} as const;

/** A conversation: the identity and bookkeeping of its stored header, plus its steps, redo stack and properties. */
export interface Conversation
  extends Pick<
    ConversationRow,
    'id' | 'agentId' | 'agentVersion' | 'userId' | 'environment' | 'state' | 'createdOn' | 'lastModifiedOn' | 'revision'
  > {
  readonly steps: readonly StoredStep[];
  readonly redo: readonly StoredStep[];
  readonly properties: Readonly<Record<string, Property>>;
  readonly tallies: Tallies;
  /** The turn waiting for a person (state AWAITING_HUMAN) and the messages queued meanwhile. */
  readonly pending?: PendingTurn | undefined;
  readonly queued?: readonly QueuedMessage[];
}

/** Undo needs a step before the current one; an ended conversation takes nothing back. */
export function canUndo(conversation: Conversation): boolean {
  return conversation.steps.length > 1 && conversation.state !== 'ENDED';
}

export function canRedo(conversation: Conversation): boolean {
  return conversation.redo.length > 0 && conversation.state !== 'ENDED';
}

/** What a step adds to the tallies: its distinct actions, its successful rules, its distinct expressions. */
export function stepTallies(step: StoredStep): { actions: string[]; rules: string[]; expressions: string[] } {
  const entry = (key: string) => step.entries.find((e) => e.key === key)?.value;
  const actions = entry('actions');
  const rules = entry('behavior_rules:success');
  const expressions = entry('expressions:parsed');
  return {
    actions: Array.isArray(actions) ? [...new Set(actions.map(String))] : [],
    rules: Array.isArray(rules) ? rules.map(String) : [],
    expressions:
      typeof expressions === 'string' && expressions !== ''
        ? [...new Set(formatEach(parseExpressionsLeniently(expressions)))]
        : [],
  };
}

function parseExpressionsLeniently(text: string) {
  try {
    return parseExpressions(text);
  } catch {
    return [];
  }
}

function formatEach(expressions: readonly Expression[]): string[] {
  return expressions.map(formatExpression);
}

/** Adds (`sign` = 1) or removes (`sign` = -1) a step's contribution. */
export function applyTallies(tallies: Tallies, step: StoredStep, sign: 1 | -1): Tallies {
  const { actions, rules, expressions } = stepTallies(step);
  const add = (counts: Readonly<Record<string, number>>, names: string[]) => {
    const next: Record<string, number> = { ...counts };
    for (const name of names) {
      const value = (next[name] ?? 0) + sign;
      if (value > 0) next[name] = value;
      else delete next[name];
    }
    return next;
  };
  return {
    actions: add(tallies.actions, actions),
    rules: add(tallies.rules, rules),
    expressions: add(tallies.expressions ?? {}, expressions),
  };
}

export const emptyTallies: Tallies = { actions: {}, rules: {}, expressions: {} };

export function latestEntry(step: StoredStep, key: string): StepEntry | undefined {
  return step.entries.find((entry) => entry.key === key);
}
