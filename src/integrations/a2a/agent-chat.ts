import type { ConversationService } from '../../runtime/conversations.ts';
import type { Conversation } from '../../runtime/memory.ts';
import type { ConversationStateName } from '../../storage/runtime-ports.ts';
import { snapshot } from '../../runtime/snapshot.ts';

/** What one exchange with an agent produced. */
export interface ChatReply {
  readonly conversationId: string;
  readonly state: ConversationStateName;
  /** The output texts of the steps this exchange added, in order. */
  readonly texts: readonly string[];
}

/**
 * One exchange with a deployed agent for the integrations (A2A, MCP): without a conversation id a new production
 * conversation starts (step 0 with its welcome, then the message as step 1, both answered); with one, the message
 * continues that conversation. Errors are the conversation service's (404 unknown, 410 ended, 408 timeout, ...).
 */
export class AgentChat {
  readonly #conversations: ConversationService;

  constructor(conversations: ConversationService) {
    this.#conversations = conversations;
  }

  async start(agentId: string, input: string, userId?: string): Promise<ChatReply> {
    const conversation = await this.#conversations.start(agentId, 'production', { userId, input, context: {} });
    return reply(conversation, false);
  }

  async continue(conversationId: string, input: string): Promise<ChatReply> {
    return reply(await this.#conversations.say(conversationId, { input, context: {} }), true);
  }

  /** The conversation's agent and state (throws 404 for an unknown conversation). */
  async describe(conversationId: string): Promise<{ agentId: string; state: ConversationStateName }> {
    const { agentId, state } = await this.#conversations.get(conversationId);
    return { agentId, state };
  }

  async end(conversationId: string): Promise<void> {
    await this.#conversations.end(conversationId);
  }
}

function reply(conversation: Conversation, currentStepOnly: boolean): ChatReply {
  const { conversationOutputs } = snapshot(conversation, {
    returnDetailed: false,
    returnCurrentStepOnly: currentStepOnly,
  });
  return {
    conversationId: conversation.id,
    state: conversation.state,
    texts: conversationOutputs.flatMap((step) => step.output ?? []),
  };
}
