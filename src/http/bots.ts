import { Type, type Static } from '@sinclair/typebox';
import { notFound } from '../errors.ts';
import { conversationReference, type ConversationService } from '../runtime/conversations.ts';
import type { CallerAccess } from '../security/access.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import { canRedo, canUndo, type Conversation } from '../runtime/memory.ts';
import { BotConversationSnapshotSchema, snapshot } from '../runtime/snapshot.ts';
import { MessageBody, MessageHeaders, messageOf, startConversation } from './conversations.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The older environment-based conversation paths (`/bots/{environment}/{botId}/...`), answered by the same
 * conversation service. Responses name the agent `botId`/`botVersion`.
 */

const BotParams = Type.Object({ environment: Type.String(), botId: Type.String() });
const BotConversationParams = Type.Object({
  environment: Type.String(),
  botId: Type.String(),
  conversationId: Type.String(),
});

const BotSnapshotQuery = (currentStepOnlyDefault: boolean) =>
  Type.Object(
    {
      returnDetailed: Type.Boolean({ default: false }),
      returnCurrentStepOnly: Type.Boolean({ default: currentStepOnlyDefault }),
    },
    { additionalProperties: true },
  );

export async function botRoutes(app: TypedApp, deps: { conversations: ConversationService }): Promise<void> {
  const { conversations } = deps;
  const tags = ['bots (older paths)'];

  /** The conversation, if it belongs to this bot in this environment. */
  const conversationOf = async (
    { environment, botId, conversationId }: Static<typeof BotConversationParams>,
    caller: CallerAccess | undefined,
  ): Promise<Conversation> => {
    const conversation = await conversations.get(conversationId, caller);
    if (conversation.agentId !== botId || conversation.environment !== normalizeEnvironment(environment)) {
      throw notFound(
        `No conversation ${conversationId} of bot ${botId} in the ${normalizeEnvironment(environment)} environment.`,
      );
    }
    return conversation;
  };

  app.post(
    '/bots/:environment/:botId',
    {
      config: { access: { roles: 'converse', level: 'USE', rule: 'starts only as oneself' } },
      schema: {
        tags,
        summary: 'Start a conversation (201, no body; the conversation reference is in Location)',
        params: BotParams,
        querystring: Type.Object({ userId: Type.Optional(Type.String()) }, { additionalProperties: true }),
        body: Type.Optional(MessageBody),
        response: { 201: { type: 'null' } },
      },
    },
    async (request, reply) => {
      const { environment, botId } = request.params;
      const { userId } = request.query;
      const conversation = await startConversation(conversations, request, botId, environment, userId);
      return reply.code(201).header('Location', conversationReference(conversation.id)).send();
    },
  );

  app.post(
    '/bots/:environment/:botId/:conversationId',
    {
      config: { access: { roles: 'converse', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'Send a message',
        params: BotConversationParams,
        querystring: BotSnapshotQuery(true),
        headers: MessageHeaders,
        body: Type.Optional(MessageBody),
        response: { 200: BotConversationSnapshotSchema },
      },
    },
    async (request) => {
      await conversationOf(request.params, request.caller);
      const conversation = await conversations.say(request.params.conversationId, messageOf(request), request.caller);
      return snapshot(conversation, { ...request.query, naming: 'bot' });
    },
  );

  app.get(
    '/bots/:environment/:botId/:conversationId',
    {
      config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'Read a conversation (every step unless returnCurrentStepOnly=true)',
        params: BotConversationParams,
        querystring: BotSnapshotQuery(false),
        response: { 200: BotConversationSnapshotSchema },
      },
    },
    async (request) => {
      const conversation = await conversationOf(request.params, request.caller);
      return snapshot(conversation, { ...request.query, naming: 'bot' });
    },
  );

  for (const [operation, available] of [
    ['undo', canUndo],
    ['redo', canRedo],
  ] as const) {
    app.get(
      `/bots/:environment/:botId/${operation}/:conversationId`,
      {
        config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
        schema: {
          tags,
          summary: `Whether ${operation} is available (body true or false)`,
          params: BotConversationParams,
          response: { 200: Type.Boolean() },
        },
      },
      async (request) => available(await conversationOf(request.params, request.caller)),
    );
    app.post(
      `/bots/:environment/:botId/${operation}/:conversationId`,
      {
        config: { access: { roles: 'converse', rule: 'own conversations only' } },
        schema: {
          tags,
          summary: `Perform ${operation} (409 when not available)`,
          params: BotConversationParams,
          response: { 200: { type: 'null' } },
        },
      },
      async (request, reply) => {
        await conversationOf(request.params, request.caller);
        await conversations[operation](request.params.conversationId, request.caller);
        return reply.code(200).send();
      },
    );
  }
}
