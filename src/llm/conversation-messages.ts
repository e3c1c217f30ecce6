import type { ModelMessage } from 'ai';
import type { StoredStep } from '../runtime/memory.ts';

/**
 * The messages an LLM task sends (reference §9.3, DESIGN §4.9): the conversation history from the conversation
 * outputs of previous steps (`input` -> user message, output texts -> one assistant message per step) within a
 * window of steps, then the current input, which a `prompt` replaces. With `sendConversation` false only the
 * current input (or prompt) is sent. The system message travels separately.
 */

export interface MessageOptions {
  /** Previous steps sent; -1 = all. */
  readonly historyLimit: number;
  readonly sendConversation: boolean;
  /** false drops the first assistant message of the history (the welcome). */
  readonly includeFirstAgentMessage: boolean;
  /** Rendered `prompt` parameter; replaces the current user message. */
  readonly prompt: string | undefined;
}

export function outputTexts(output: Readonly<Record<string, unknown>>): string[] {
  const items = output.output;
  if (!Array.isArray(items)) return [];
  const texts: string[] = [];
  for (const item of items) {
    if (typeof item === 'string') texts.push(item);
    else if (item !== null && typeof item === 'object' && (item as { type?: unknown }).type === 'text') {
      const text = (item as { text?: unknown }).text;
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts.filter((text) => text.trim() !== '');
}

export function historyMessages(
  steps: readonly StoredStep[],
  options: Pick<MessageOptions, 'historyLimit' | 'includeFirstAgentMessage'>,
): ModelMessage[] {
  const window =
    options.historyLimit < 0 ? steps : options.historyLimit === 0 ? [] : steps.slice(-options.historyLimit);
  const messages: ModelMessage[] = [];
  // The welcome is the first assistant message of the whole conversation: only dropped when the window starts there.
  let firstAssistantSkipped = options.includeFirstAgentMessage || window[0] !== steps[0];
  for (const step of window) {
    const input = step.output.input;
    if (typeof input === 'string' && input.trim() !== '') messages.push({ role: 'user', content: input });
    const texts = outputTexts(step.output);
    if (texts.length === 0) continue;
    if (!firstAssistantSkipped) {
      firstAssistantSkipped = true;
      continue;
    }
    messages.push({ role: 'assistant', content: texts.join('\n') });
  }
  return messages;
}

export function buildMessages(
  previousSteps: readonly StoredStep[],
  currentInput: string,
  options: MessageOptions,
): ModelMessage[] {
  const messages = options.sendConversation ? historyMessages(previousSteps, options) : [];
  const current = options.prompt !== undefined && options.prompt.trim() !== '' ? options.prompt : currentInput;
  if (current.trim() !== '') messages.push({ role: 'user', content: current });
  return messages;
}
