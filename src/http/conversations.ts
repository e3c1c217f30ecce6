import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, invalid } from '../errors.ts';
import { openEventStream } from './event-stream.ts';
import { problemOf } from './problems.ts';
import { parseContext } from '../runtime/context.ts';
import { conversationReference, type ConversationService, type Message } from '../runtime/conversations.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import { canRedo, canUndo, type ContextValue, type Conversation } from '../runtime/memory.ts';
import { ConversationSnapshotSchema, snapshot } from '../runtime/snapshot.ts';
import type { ConversationRow } from '../storage/runtime-ports.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The agent-based conversation API (`/agents/...`) and the conversation store (`/conversationstore/...`).
 * Message bodies are lenient (unknown fields are ignored), but their input and context are checked.
 */

export const SnapshotQuery = Type.Object(
  {
    returnDetailed: Type.Boolean({
      default: false,
      description: 'every step entry and output key, not only input, actions, output and quick replies',
    }),
    returnCurrentStepOnly: Type.Boolean({
      default: true,
      description: 'only the step just processed (false: every step since the start)',
    }),
  },
  { additionalProperties: true },
);

const ConversationParams = Type.Object({ conversationId: Type.String() });

export const MessageBody = Type.Union(
  [
    Type.Object(
      {
        input: Type.Optional(Type.String({ description: 'the user message' })),
        context: Type.Optional(
          Type.Record(Type.String(), Type.Object({ type: Type.String(), value: Type.Unknown() }), {
            description: 'context values by name, each {type, value}; type is string, expressions, object or array',
          }),
        ),
      },
      { additionalProperties: true },
    ),
    Type.String({ description: 'text/plain: the user message' }),
  ],
  { description: 'JSON {input, context} or the input as text/plain' },
);

const ConversationDescriptorSchema = Type.Object(
  {
    resource: Type.String({ description: 'svc:// reference of the conversation' }),
    conversationId: Type.String(),
    agentId: Type.String(),
    agentVersion: Type.Integer(),
    userId: Type.String(),
    environment: Type.String(),
    conversationState: ConversationSnapshotSchema.properties.conversationState,
    conversationStepSize: Type.Integer(),
    createdOn: Type.Integer({ description: 'epoch milliseconds' }),
    lastModifiedOn: Type.Integer({ description: 'epoch milliseconds' }),
  },
  { title: 'ConversationDescriptor' },
);

const StoredConversationSchema = Type.Composite(
  [
    ConversationSnapshotSchema,
    Type.Object({
      redoCacheSize: Type.Integer({ description: 'undone steps that redo can restore' }),
      createdOn: Type.Integer({ description: 'epoch milliseconds' }),
      lastModifiedOn: Type.Integer({ description: 'epoch milliseconds' }),
    }),
  ],
  { title: 'StoredConversation', description: 'The conversation with every step and all its data' },
);

/**
 * The `Idempotency-Key` header of message requests: a retry with the same key and message is answered from the
 * stored step instead of running the turn again (also on another instance or after a restart).
 */
export const MessageHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          'any unique text (visible ASCII, up to 255 characters) naming this message; a retry with the same key and message answers the stored result, with another message 422',
      }),
    ),
  },
  { additionalProperties: true },
);

/** The message of a message request: its body, its signed-in caller and its idempotency key. */
export function messageOf(
  request: Pick<FastifyRequest, 'body' | 'callerIdentity'> & { headers: Static<typeof MessageHeaders> },
): Message {
  return {
    ...parseMessage(request.body),
    caller: request.callerIdentity,
    idempotencyKey: request.headers['idempotency-key'],
  };
}

/** Reads a message body: JSON `{input, context}` (unknown fields ignored) or the input as plain text. */
export function parseMessage(body: unknown): Message {
  if (body === undefined || body === null || body === '') return { input: '', context: {} };
  if (typeof body === 'string') return { input: body, context: {} };
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalid('The message must be a JSON object {input, context} or text/plain.', { path: '$' });
  const { input, context } = body as { input?: unknown; context?: unknown };
  if (input !== undefined && typeof input !== 'string') throw invalid('input must be a text.', { path: '$.input' });
  return { input: input ?? '', context: parseContext(context, '$.context') };
}

/**
 * Starts a conversation of `agentId` for a start request: its body (see `parseStartBody`), its caller, and the
 * environment and user id the route takes from its path or query.
 */
export function startConversation(
  conversations: ConversationService,
  request: Pick<FastifyRequest, 'body' | 'caller' | 'callerIdentity'>,
  agentId: string,
  environment: string | undefined,
  userId: string | undefined,
): Promise<Conversation> {
  const { input, context } = parseStartBody(request.body);
  return conversations.start(
    agentId,
    normalizeEnvironment(environment),
    { userId, input, context, caller: request.callerIdentity },
    request.caller,
  );
}

/** A start body is `{input, context}` or, as upstream sends it, a bare context map. */
function parseStartBody(body: unknown): { input?: string | undefined; context: Record<string, ContextValue> } {
  if (body === undefined || body === null || body === '') return { context: {} };
  if (typeof body === 'string') return { input: body, context: {} };
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalid('The start body must be a JSON object {input, context} or a context map.', { path: '$' });
  const keys = Object.keys(body);
  const isMessage =
    keys.length > 0 &&
    keys.every((key) => key === 'input' || key === 'context') &&
    (typeof (body as { input?: unknown }).input === 'string' ||
      !('input' in body) ||
      (body as { input?: unknown }).input === undefined);
  if (isMessage) return parseMessage(body);
  return { context: parseContext(body, '$') };
}

function conversationDescriptor(row: ConversationRow): Static<typeof ConversationDescriptorSchema> {
  return {
    resource: conversationReference(row.id),
    conversationId: row.id,
    agentId: row.agentId,
    agentVersion: row.agentVersion,
    userId: row.userId,
    environment: row.environment,
    conversationState: row.state,
    conversationStepSize: row.stepCount,
    createdOn: row.createdOn,
    lastModifiedOn: row.lastModifiedOn,
  };
}

const emptyReply = (reply: FastifyReply) => reply.code(200).send();

/** The filters of the conversation list (and of the bulk delete). */
const conversationFilter = {
  agentId: Type.Optional(Type.String()),
  agentVersion: Type.Optional(Type.Integer({ minimum: 1 })),
  userId: Type.Optional(Type.String()),
  environment: Type.Optional(Type.String()),
  conversationState: Type.Optional(ConversationSnapshotSchema.properties.conversationState),
};
const ConversationFilter = Type.Object(conversationFilter);

function filterOf(query: Static<typeof ConversationFilter>) {
  return {
    agentId: query.agentId,
    agentVersion: query.agentVersion,
    userId: query.userId,
    environment: query.environment === undefined ? undefined : normalizeEnvironment(query.environment),
    state: query.conversationState,
  };
}
const TextBoolean = Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'text/plain' });

export async function conversationRoutes(app: TypedApp, deps: { conversations: ConversationService }): Promise<void> {
  const { conversations } = deps;
  const tags = ['conversations'];

  app.post(
    '/agents/:agentId/start',
    {
      config: { access: { roles: 'converse', level: 'USE', rule: 'starts only as oneself' } },
      schema: {
        tags,
        summary: 'Start a conversation with the newest READY version of a deployed agent',
        description:
          'Step 0 runs with the action CONVERSATION_START and the start context; a given input then runs as the first message. The body holds every step so far.',
        params: Type.Object({ agentId: Type.String() }),
        querystring: Type.Object(
          {
            environment: Type.String({ default: 'production' }),
            userId: Type.Optional(Type.String()),
          },
          { additionalProperties: true },
        ),
        body: Type.Optional(MessageBody),
        response: { 201: ConversationSnapshotSchema },
      },
    },
    async (request, reply) => {
      const { agentId } = request.params;
      const { environment, userId } = request.query;
      const conversation = await startConversation(conversations, request, agentId, environment, userId);
      return reply
        .code(201)
        .header('Location', conversationReference(conversation.id))
        .send(snapshot(conversation, { returnDetailed: false, returnCurrentStepOnly: false }));
    },
  );

  app.post(
    '/agents/:conversationId',
    {
      config: { access: { roles: 'converse', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'Send a message; answers after every message sent before it was processed',
        params: ConversationParams,
        querystring: SnapshotQuery,
        headers: MessageHeaders,
        body: Type.Optional(MessageBody),
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      const { conversationId } = request.params;
      const options = request.query;
      const conversation = await conversations.say(conversationId, messageOf(request), request.caller);
      return snapshot(conversation, options);
    },
  );

  app.post(
    '/agents/:conversationId/stream',
    {
      config: { access: { roles: 'converse', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'Send a message and follow the turn as server-sent events',
        description:
          'Events: task_start and task_complete per task, token per streamed LLM text delta, tool_call, cascade_step_start ({task, step, provider, modelName}) and cascade_escalation ({task, fromStep, toStep, outcome, reason}) of model cascades, task_failed ({task, reason}: the turn ends in ERROR), then done (data: the conversation, as the message endpoint answers it) or error (data: a problem).',
        params: ConversationParams,
        querystring: SnapshotQuery,
        headers: MessageHeaders,
        body: Type.Optional(MessageBody),
        response: { 200: { description: 'text/event-stream', type: 'string' } },
      },
    },
    async (request, reply) => {
      const { conversationId } = request.params;
      const options = request.query;
      const message = messageOf(request);
      // Problems found before the turn starts answer as ordinary problems (404, 410, 400, 422, ...).
      await conversations.checkOpen(conversationId, request.caller, message);
      // A client that goes away stops receiving events; the turn itself completes and is stored, as a message is.
      const stream = openEventStream(reply);
      try {
        const conversation = await conversations.say(
          conversationId,
          { ...message, onEvent: (event) => void stream.send(event, event.type) },
          request.caller,
        );
        void stream.send(snapshot(conversation, options), 'done');
      } catch (error) {
        if (!(error instanceof AppError)) request.log.error({ err: error, conversationId }, 'streamed turn failed');
        void stream.send(problemOf(error), 'error');
      } finally {
        stream.close();
      }
    },
  );

  app.get(
    '/agents/:conversationId',
    {
      config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'Read a conversation',
        params: ConversationParams,
        querystring: SnapshotQuery,
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      return snapshot(await conversations.get(request.params.conversationId, request.caller), request.query);
    },
  );

  app.get(
    '/agents/:conversationId/status',
    {
      config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
      schema: { tags, summary: 'The conversation state', params: ConversationParams, response: { 200: Type.String() } },
    },
    async (request, reply) => {
      const { state } = await conversations.get(request.params.conversationId, request.caller);
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(state));
    },
  );

  for (const [operation, available] of [
    ['undo', canUndo],
    ['redo', canRedo],
  ] as const) {
    app.get(
      `/agents/:conversationId/${operation}`,
      {
        config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
        schema: {
          tags,
          summary: `Whether ${operation} is available (text/plain true or false)`,
          params: ConversationParams,
          response: { 200: TextBoolean },
        },
      },
      async (request, reply) => {
        const conversation = await conversations.get(request.params.conversationId, request.caller);
        return reply.type('text/plain; charset=utf-8').send(available(conversation) ? 'true' : 'false');
      },
    );
    app.post(
      `/agents/:conversationId/${operation}`,
      {
        config: { access: { roles: 'converse', rule: 'own conversations only' } },
        schema: {
          tags,
          summary:
            operation === 'undo'
              ? 'Take back the last step (409 when nothing to undo)'
              : 'Restore the last undone step (409 when nothing to redo)',
          params: ConversationParams,
          response: { 200: { type: 'null' } },
        },
      },
      async (request, reply) => {
        await conversations[operation](request.params.conversationId, request.caller);
        return emptyReply(reply);
      },
    );
  }

  app.post(
    '/agents/:conversationId/endConversation',
    {
      config: { access: { roles: 'converse', rule: 'own conversations only' } },
      schema: {
        tags,
        summary: 'End the conversation (idempotent); later messages answer 410',
        params: ConversationParams,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await conversations.end(request.params.conversationId, request.caller);
      return emptyReply(reply);
    },
  );

  const storeTags = ['conversationstore'];
  app.get(
    '/conversationstore/conversations',
    {
      config: { access: { roles: 'conversation-read', rule: 'lists only their own' } },
      schema: {
        tags: storeTags,
        summary: 'List conversations, most recently active first',
        querystring: Type.Object(
          {
            index: Type.Integer({ default: 0, minimum: 0 }),
            limit: Type.Integer({ default: 20, minimum: 1, maximum: 10_000 }),
            ...conversationFilter,
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(ConversationDescriptorSchema) },
      },
    },
    async (request) => {
      const { query } = request;
      const rows = await conversations.list(
        { index: query.index, limit: query.limit, ...filterOf(query) },
        request.caller,
      );
      return rows.map(conversationDescriptor);
    },
  );

  app.delete(
    '/conversationstore/conversations',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags: storeTags,
        summary: 'Delete every conversation (matching the filters) last active more than deleteOlderThanDays ago',
        querystring: Type.Object(
          {
            deleteOlderThanDays: Type.Integer({
              minimum: 0,
              maximum: 1_000_000,
              description: 'days since the last activity; 0 deletes every matching conversation',
            }),
            ...conversationFilter,
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Object({ deleted: Type.Integer({ description: 'how many were deleted' }) }) },
      },
    },
    async (request) => {
      const { query } = request;
      return { deleted: await conversations.deleteOlderThan(filterOf(query), query.deleteOlderThanDays) };
    },
  );

  app.get(
    '/conversationstore/conversations/:conversationId',
    {
      config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
      schema: {
        tags: storeTags,
        summary: 'The whole stored conversation: every step with all its data',
        params: ConversationParams,
        response: { 200: StoredConversationSchema },
      },
    },
    async (request) => {
      const conversation = await conversations.get(request.params.conversationId, request.caller);
      return {
        ...snapshot(conversation, { returnDetailed: true, returnCurrentStepOnly: false }),
        redoCacheSize: conversation.redo.length,
        createdOn: conversation.createdOn,
        lastModifiedOn: conversation.lastModifiedOn,
      };
    },
  );

  app.get(
    '/conversationstore/conversations/simple/:conversationId',
    {
      config: { access: { roles: 'conversation-read', rule: 'own conversations only' } },
      schema: {
        tags: storeTags,
        summary: 'The conversation response model of a conversation',
        params: ConversationParams,
        querystring: SnapshotQuery,
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      const conversation = await conversations.get(request.params.conversationId, request.caller);
      return snapshot(conversation, request.query);
    },
  );

  app.delete(
    '/conversationstore/conversations/:conversationId',
    {
      config: { access: { roles: 'converse', rule: 'own conversations only' } },
      schema: {
        tags: storeTags,
        summary: 'Delete a conversation and its steps',
        params: ConversationParams,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await conversations.delete(request.params.conversationId, request.caller);
      return emptyReply(reply);
    },
  );
}
