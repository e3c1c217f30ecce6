import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.ts';
import { conversationReference, type ConversationService } from '../runtime/conversations.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import { canRedo, canUndo, type Conversation } from '../runtime/memory.ts';
import { snapshot } from '../runtime/snapshot.ts';
import { ConversationResponse, MessageBody, parseMessage, parseStartBody } from './conversations.ts';

/**
 * The older environment-based conversation paths (`/bots/{environment}/{botId}/...`), answered by the same
 * conversation service. Responses name the agent `botId`/`botVersion`.
 */

const BotParams = Type.Object({ environment: Type.String(), botId: Type.String() });
const BotConversationParams = Type.Object({ environment: Type.String(), botId: Type.String(), conversationId: Type.String() });
type BotConversationParams = { environment: string; botId: string; conversationId: string };

const BotSnapshotQuery = (currentStepOnlyDefault: boolean) => Type.Object({
  returnDetailed: Type.Boolean({ default: false }),
  returnCurrentStepOnly: Type.Boolean({ default: currentStepOnlyDefault }),
}, { additionalProperties: true });

export async function botRoutes(app: FastifyInstance, deps: { conversations: ConversationService }): Promise<void> {
  const { conversations } = deps;
  const tags = ['bots (older paths)'];

  /** The conversation, if it belongs to this bot in this environment. */
  const conversationOf = async ({ environment, botId, conversationId }: BotConversationParams): Promise<Conversation> => {
    const conversation = await conversations.get(conversationId);
    if (conversation.agentId !== botId || conversation.environment !== normalizeEnvironment(environment)) {
      throw notFound(`No conversation ${conversationId} of bot ${botId} in the ${normalizeEnvironment(environment)} environment.`);
    }
    return conversation;
  };

  app.post('/bots/:environment/:botId', {
    schema: {
      tags, summary: 'Start a conversation (201, no body; the conversation reference is in Location)',
      params: BotParams, querystring: Type.Object({ userId: Type.Optional(Type.String()) }, { additionalProperties: true }),
      body: Type.Optional(MessageBody), response: { 201: { type: 'null' } },
    },
  }, async (request, reply) => {
    const { environment, botId } = request.params as { environment: string; botId: string };
    const { userId } = request.query as { userId?: string };
    const { input, context } = parseStartBody(request.body);
    const conversation = await conversations.start(botId, normalizeEnvironment(environment), { userId, input, context, caller: request.callerIdentity });
    return reply.code(201).header('Location', conversationReference(conversation.id)).send();
  });

  app.post('/bots/:environment/:botId/:conversationId', {
    schema: {
      tags, summary: 'Send a message', params: BotConversationParams, querystring: BotSnapshotQuery(true),
      body: Type.Optional(MessageBody), response: { 200: ConversationResponse },
    },
  }, async (request) => {
    const params = request.params as BotConversationParams;
    await conversationOf(params);
    const conversation = await conversations.say(params.conversationId, { ...parseMessage(request.body), caller: request.callerIdentity });
    return snapshot(conversation, { ...(request.query as { returnDetailed: boolean; returnCurrentStepOnly: boolean }), naming: 'bot' });
  });

  app.get('/bots/:environment/:botId/:conversationId', {
    schema: { tags, summary: 'Read a conversation (every step unless returnCurrentStepOnly=true)', params: BotConversationParams, querystring: BotSnapshotQuery(false), response: { 200: ConversationResponse } },
  }, async (request) => {
    const conversation = await conversationOf(request.params as BotConversationParams);
    return snapshot(conversation, { ...(request.query as { returnDetailed: boolean; returnCurrentStepOnly: boolean }), naming: 'bot' });
  });

  for (const [operation, available, perform] of [
    ['undo', canUndo, (id: string) => conversations.undo(id)],
    ['redo', canRedo, (id: string) => conversations.redo(id)],
  ] as const) {
    app.get(`/bots/:environment/:botId/${operation}/:conversationId`, {
      schema: { tags, summary: `Whether ${operation} is available (body true or false)`, params: BotConversationParams, response: { 200: Type.Boolean() } },
    }, async (request) => available(await conversationOf(request.params as BotConversationParams)));
    app.post(`/bots/:environment/:botId/${operation}/:conversationId`, {
      schema: { tags, summary: `Perform ${operation} (409 when not available)`, params: BotConversationParams, response: { 200: { type: 'null' } } },
    }, async (request, reply) => {
      const params = request.params as BotConversationParams;
      await conversationOf(params);
      await perform(params.conversationId);
      return reply.code(200).send();
    });
  }
}
