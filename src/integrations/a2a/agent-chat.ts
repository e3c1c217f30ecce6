import type { ConversationService } from '../../runtime/conversations.ts';
import type { CallerAccess } from '../../security/access.ts';
import type { CallerIdentity } from '../../security/auth-caller.ts';
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
 * Who talks: the authenticated caller, checked by the conversation service exactly as on the REST routes (USE on the
 * agent, only its own conversations; the user of what it starts), its identity for `${caller:…}` placeholders, and
 * for an integration that names its users itself (A2A) the user id of the conversations it starts.
 */
export interface ChatCaller {
  readonly access?: CallerAccess | undefined;
  readonly identity?: CallerIdentity | undefined;
  readonly userId?: string | undefined;
}

/**
 * One exchange with a deployed agent for the integrations (A2A, MCP): without a conversation id a new production
 * conversation starts (step 0 with its welcome, then the message as step 1, both answered); with one, the message
 * continues that conversation. Errors are the conversation service's (404 unknown or another user's, 410 ended,
 * 408 timeout, ...).
 */
export class AgentChat {
  readonly #conversations: ConversationService;

  constructor(conversations: ConversationService) {
    this.#conversations = conversations;
  }

  async start(agentId: string, input: string, as: ChatCaller = {}): Promise<ChatReply> {
    const conversation = await this.#conversations.start(
      agentId,
      'production',
      { userId: as.userId, input, context: {}, caller: as.identity },
      as.access,
    );
    return reply(conversation, false);
  }

  async continue(conversationId: string, input: string, as: ChatCaller = {}): Promise<ChatReply> {
    return reply(
      await this.#conversations.say(conversationId, { input, context: {}, caller: as.identity }, as.access),
      true,
    );
  }

  /** The conversation's agent and state (throws 404 for an unknown conversation, or one the caller may not use). */
  async describe(
    conversationId: string,
    as: ChatCaller = {},
  ): Promise<{ agentId: string; state: ConversationStateName }> {
    const { agentId, state } = await this.#conversations.get(conversationId, as.access);
    return { agentId, state };
  }

  async end(conversationId: string, as: ChatCaller = {}): Promise<void> {
    await this.#conversations.end(conversationId, as.access);
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
