import { isRecord } from '../shared/json.ts';

/** One entry of a conversation log: what the user said (`user`) or what the agent answered (`assistant`). */
export interface ConversationLogMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

/**
 * The original service's conversation log (its `ConversationLog`): the conversation's past inputs and outputs as
 * role/content messages. In templates: `{conversationLog.generate().toObject()}` (the message list, e.g. for a chat
 * API's `messages`), `{conversationLog.generate()}` / `.toString()` (lines `role: content`),
 * `{json:serialize(conversationLog.generate())}` (`{"messages":[...]}`).
 */
export class ConversationLog {
  readonly messages: readonly ConversationLogMessage[];

  constructor(messages: readonly ConversationLogMessage[]) {
    this.messages = messages;
  }

  toString(): string {
    return this.messages.map((message) => `${message.role}: ${message.content}`).join('\n');
  }

  toJSON(): { messages: readonly ConversationLogMessage[] } {
    return { messages: this.messages };
  }
}

/**
 * The template object `conversationLog` (the original's `ConversationLogGenerator`): holds only a way to reach the
 * conversation outputs; the log is built when a template calls `generate()`, so a turn whose templates never ask
 * for it does not pay for it.
 */
export class ConversationLogGenerator {
  readonly #outputs: () => readonly Readonly<Record<string, unknown>>[];

  constructor(outputs: () => readonly Readonly<Record<string, unknown>>[]) {
    this.#outputs = outputs;
  }

  /** Per step, oldest first: its `input` as a user message, then its output texts joined by a space as the agent's. */
  generate(): ConversationLog {
    const messages: ConversationLogMessage[] = [];
    for (const output of this.#outputs()) {
      if (typeof output.input === 'string') messages.push({ role: 'user', content: output.input });
      if (Array.isArray(output.output)) {
        const texts = output.output.map(outputText).filter((text) => text !== undefined);
        messages.push({ role: 'assistant', content: texts.join(' ') });
      }
    }
    return new ConversationLog(messages);
  }
}

/** The text of an output item: a plain string, or the `text` of a text item. */
function outputText(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  return isRecord(item) && typeof item.text === 'string' ? item.text : undefined;
}
