import type { ModelMessage } from 'ai';
import type { StoredStep } from '../runtime/memory.ts';
import { answerTexts, estimateTokens, historyWindow, rollingSummary, type RollingSummary } from './history-window.ts';

/**
 * The messages an LLM task sends (reference §9.3, DESIGN §4.9): the conversation history from the conversation
 * outputs of previous steps (`input` -> user message, output texts -> one assistant message per step) within a
 * window of steps and of estimated tokens (history-window.ts), then the current input, which a `prompt` replaces. With `sendConversation` false only the
 * current input (or prompt) is sent. The system message travels separately.
 */

export interface MessageOptions {
  /** Previous steps sent; -1 = all. */
  readonly historyLimit: number;
  /** Estimated-token budget of the request (history-window.ts); -1 = unbounded. */
  readonly maxContextTokens: number;
  readonly anchorFirstSteps: number;
  /** The system message, counted against the token budget. */
  readonly system: string | undefined;
  /** Key of the rolling summary of the steps that fell out of the window; undefined = no summary. */
  readonly summaryKey: string | undefined;
  readonly sendConversation: boolean;
  /** false drops the first assistant message of the history (the welcome). */
  readonly includeFirstAgentMessage: boolean;
  /** Rendered `prompt` parameter; replaces the current user message. */
  readonly prompt: string | undefined;
}

export interface BuiltMessages {
  readonly messages: ModelMessage[];
  /** The rolling summary of the dropped steps, when asked for and some were dropped. */
  readonly summary: RollingSummary | undefined;
}

/** The messages of the chosen steps; the welcome is dropped only when they start at the conversation's start. */
function historyMessages(
  window: readonly StoredStep[],
  startsTheConversation: boolean,
  includeFirstAgentMessage: boolean,
): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let firstAssistantSkipped = includeFirstAgentMessage || !startsTheConversation;
  for (const step of window) {
    const input = step.output.input;
    if (typeof input === 'string' && input.trim() !== '') messages.push({ role: 'user', content: input });
    const texts = answerTexts(step);
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
): BuiltMessages {
  const current = options.prompt !== undefined && options.prompt.trim() !== '' ? options.prompt : currentInput;
  const messages: ModelMessage[] = [];
  let summary: RollingSummary | undefined;
  if (options.sendConversation) {
    const window = historyWindow(previousSteps, {
      historyLimit: options.historyLimit,
      maxContextTokens: options.maxContextTokens,
      anchorFirstSteps: options.anchorFirstSteps,
      fixedTokens: estimateTokens(current) + estimateTokens(options.system ?? ''),
    });
    messages.push(
      ...historyMessages(
        window.steps,
        window.steps[0] !== undefined && window.steps[0] === previousSteps[0],
        options.includeFirstAgentMessage,
      ),
    );
    if (options.summaryKey !== undefined) summary = rollingSummary(previousSteps, window, options.summaryKey);
  }
  if (current.trim() !== '') messages.push({ role: 'user', content: current });
  return { messages, summary };
}
