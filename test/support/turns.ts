import {
  emptyTallies,
  type ContextValue,
  type Conversation,
  type Property,
  type StoredStep,
  type Tallies,
} from '../../src/runtime/memory.ts';
import { Turn } from '../../src/runtime/turn.ts';

/** What a unit test of a task sets of the conversation its turn belongs to; the rest is a fixed test identity. */
export interface TestConversationParts {
  /** Default 'a'. */
  readonly agentId?: string;
  readonly steps?: readonly StoredStep[];
  readonly tallies?: Tallies;
  readonly properties?: Readonly<Record<string, Property>>;
}

export function testConversation(parts: TestConversationParts = {}): Conversation {
  return {
    id: 'c',
    agentId: parts.agentId ?? 'a',
    agentVersion: 1,
    userId: 'u',
    environment: 'production',
    state: 'READY',
    createdOn: 0,
    lastModifiedOn: 0,
    revision: 0,
    redo: [],
    steps: parts.steps ?? [],
    tallies: parts.tallies ?? emptyTallies,
    properties: parts.properties ?? {},
  };
}

/** A turn as the runtime hands it to a task (no events, never aborted), over a conversation built in memory. */
export function testTurn(
  options: TestConversationParts & { input?: string; context?: Readonly<Record<string, ContextValue>> } = {},
): Turn {
  return new Turn({
    conversation: testConversation(options),
    input: options.input ?? '',
    context: options.context ?? {},
    signal: new AbortController().signal,
  });
}
