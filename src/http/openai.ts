import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomId } from '../ids.ts';
import type { ChatAnswer, ChatMessage, OpenAiChat, PreparedChat } from '../integrations/openai/openai-chat.ts';
import { MessageHeaders } from './conversations.ts';
import { problem, problemOf, type Problem } from './problems.ts';
import { openEventStream } from './event-stream.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The OpenAI-compatible API (`/v1`): `GET /v1/models`, `POST /v1/chat/completions` (JSON or `stream: true`
 * server-sent `chat.completion.chunk`s ending with `data: [DONE]`). Errors on these paths, the 401 of the
 * authentication included, have OpenAI's shape `{"error": {"message", "type", "param", "code"}}`. Callers
 * authenticate as on the rest of the API (OIDC bearer token) or with an API key (`/administration/apikeys`).
 * The rules (models, conversations, users) are `OpenAiChat`'s.
 */

const CONVERSATION_HEADER = 'x-conversation-id';

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: false });

const MessageSchema = Type.Object(
  {
    role: Type.Union(
      [Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant')],
      {
        description: "tool messages are refused: the agent's tools are its own",
      },
    ),
    content: Type.Union([Type.String(), Type.Array(TextPart), Type.Null()], {
      description: 'text, or a list of text parts (other part types are refused)',
    }),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const ChatCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'an agent id (<agentId>@test for the test environment) or alias' }),
    messages: Type.Array(MessageSchema, { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    ),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "the conversation's userId" })),
    conversation_id: Type.Optional(Type.String({ description: 'continue this conversation (also X-Conversation-Id)' })),
    n: Type.Optional(Type.Literal(1, { description: 'one answer per request' })),
    tools: Type.Optional(
      Type.Array(Type.Unknown(), { maxItems: 0, description: "none: the agent's tools are its own" }),
    ),
    tool_choice: Type.Optional(Type.Literal('none')),
  },
  {
    additionalProperties: false,
    description:
      "Sampling parameters (temperature, max_tokens, ...) are refused with a 400: the agent's configuration decides them.",
  },
);

const ErrorSchema = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.String(),
    param: Type.Union([Type.String(), Type.Null()]),
    code: Type.Union([Type.String(), Type.Null()]),
  }),
});

const ModelSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
});

const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

const CompletionSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({
        role: Type.Literal('assistant'),
        content: Type.String(),
        refusal: Type.Null(),
      }),
      logprobs: Type.Null(),
      finish_reason: Type.Literal('stop'),
    }),
  ),
  usage: Type.Optional(UsageSchema),
  conversation_id: Type.String({ description: 'the conversation that answered (send it back to continue it)' }),
  conversation_state: Type.String({ description: 'READY, AWAITING_HUMAN (a person decides first), ENDED, ...' }),
});

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'permission_error', code: null },
  404: { type: 'invalid_request_error', code: 'not_found' },
  408: { type: 'timeout_error', code: 'turn_timeout' },
  409: { type: 'invalid_request_error', code: 'conflict' },
  410: { type: 'invalid_request_error', code: 'conversation_ended' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  415: { type: 'invalid_request_error', code: null },
  422: { type: 'invalid_request_error', code: null },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
};

/** A problem (the service's error shape) in OpenAI's error shape. */
export function openAiError(value: Problem): Static<typeof ErrorSchema> {
  const known = ERROR_TYPES[value.status] ?? { type: 'server_error', code: null };
  const code = typeof value.code === 'string' ? value.code : known.code;
  const param = typeof value.path === 'string' ? value.path.replace(/^\$\.?/, '') || null : null;
  return { error: { message: value.detail, type: known.type, param, code } };
}

function textOf(content: Static<typeof MessageSchema>['content']): string {
  if (content === null) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

const completionId = () => `chatcmpl-${randomId()}`;

function usageOf(answer: ChatAnswer) {
  if (!answer.usage) return undefined;
  const { promptTokens, completionTokens } = answer.usage;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** A failed turn (state ERROR): a 502 in OpenAI's shape naming the reason. */
function failedTurn(answer: ChatAnswer) {
  return {
    error: {
      message: `The agent's turn failed: ${answer.failure}`,
      type: 'server_error',
      param: null,
      code: 'agent_turn_failed',
    },
  };
}

export async function openAiRoutes(app: TypedApp, deps: { chat: OpenAiChat }): Promise<void> {
  const { chat } = deps;
  const tags = ['OpenAI-compatible API'];
  const access = { roles: 'converse', level: 'USE', apiKeys: true, rule: 'or an API key for its agents' } as const;
  const callerOf = (request: FastifyRequest) => ({
    access: request.caller,
    identity: request.callerIdentity,
    apiKey: request.apiKey,
  });

  // Every problem on these paths (validation, authentication, the services' errors) leaves in OpenAI's shape.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/problem+json')) return payload;
    reply.type('application/json; charset=utf-8');
    return JSON.stringify(openAiError(JSON.parse(String(payload)) as Problem));
  });
  // Paths under /v1 that no route serves (also ahead of the manager's catch-all page).
  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/*',
    config: { access: { roles: 'authenticated', apiKeys: true } },
    schema: { hide: true },
    handler: async (request, reply) =>
      reply
        .code(404)
        .type('application/json; charset=utf-8')
        .send(openAiError(problem(404, `No resource at ${request.method} ${request.url.split('?')[0]}.`))),
  });

  app.get(
    '/models',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The agents the caller may chat with, as models',
        response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelSchema) }) },
      },
    },
    async (request) => ({
      object: 'list' as const,
      data: (await chat.models(callerOf(request))).map((model) => ({
        id: model.id,
        object: 'model' as const,
        created: model.created,
        owned_by: model.environment === 'test' ? 'svc-test' : 'svc',
      })),
    }),
  );

  app.get(
    '/models/:model',
    {
      config: { access },
      schema: {
        tags,
        summary: 'One model',
        params: Type.Object({ model: Type.String() }),
        response: { 200: ModelSchema },
      },
    },
    async (request) => {
      const model = await chat.model(request.params.model, callerOf(request));
      return {
        id: model.id,
        object: 'model' as const,
        created: model.created,
        owned_by: model.environment === 'test' ? 'svc-test' : 'svc',
      };
    },
  );

  app.post(
    '/chat/completions',
    {
      config: { access },
      schema: {
        tags,
        summary: "Run a turn of the model's agent (stream: true for server-sent chunks)",
        description:
          'The conversation is found again by X-Conversation-Id / conversation_id, else by the history; the answer names it in the X-Conversation-Id header and the conversation_id field.',
        headers: Type.Composite([Type.Object({ [CONVERSATION_HEADER]: Type.Optional(Type.String()) }), MessageHeaders]),
        body: ChatCompletionBody,
        response: { 200: CompletionSchema, 502: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const caller = callerOf(request);
      const messages: ChatMessage[] = body.messages.map((message) => ({
        role: message.role,
        text: textOf(message.content),
      }));
      const prepared = await chat.prepare(
        {
          model: body.model,
          messages,
          user: body.user,
          conversationId: body.conversation_id ?? request.headers[CONVERSATION_HEADER],
          idempotencyKey: request.headers['idempotency-key'],
        },
        caller,
      );
      reply.header(CONVERSATION_HEADER, prepared.conversationId);
      if (body.stream === true)
        return streamCompletion(request, reply, chat, prepared, body.stream_options?.include_usage === true);
      const answer = await chat.run(prepared, caller);
      if (answer.failure !== undefined) return reply.code(502).send(failedTurn(answer));
      await chat.remember(prepared, answer.text);
      const usage = usageOf(answer);
      return {
        id: completionId(),
        object: 'chat.completion' as const,
        created: Math.floor(Date.now() / 1000),
        model: prepared.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant' as const, content: answer.text, refusal: null },
            logprobs: null,
            finish_reason: 'stop' as const,
          },
        ],
        ...(usage ? { usage } : {}),
        conversation_id: answer.conversationId,
        conversation_state: answer.conversationState,
      };
    },
  );
}

/**
 * Streams the turn as `chat.completion.chunk`s: the role first, then the model's tokens as they come, then what
 * the answer holds beyond them (rule-based output, or the whole answer when nothing streamed), the finish chunk,
 * the usage chunk when asked for, and `data: [DONE]`. A failure during the turn is sent as an error event in
 * OpenAI's shape (the status line left long before).
 */
async function streamCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  chat: OpenAiChat,
  prepared: PreparedChat,
  includeUsage: boolean,
): Promise<void> {
  const stream = openEventStream(reply);
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: 'stop' | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: prepared.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    conversation_id: prepared.conversationId,
  });
  void stream.send(chunk({ role: 'assistant', content: '' }));
  let streamed = '';
  try {
    const answer = await chat.run(
      prepared,
      { access: request.caller, identity: request.callerIdentity, apiKey: request.apiKey },
      (event) => {
        if (event.type !== 'token') return;
        streamed += event.text;
        void stream.send(chunk({ content: event.text }));
      },
    );
    if (answer.failure !== undefined) {
      void stream.send(failedTurn(answer));
    } else {
      const rest = answer.text.startsWith(streamed) ? answer.text.slice(streamed.length) : '';
      if (rest !== '') void stream.send(chunk({ content: rest }));
      const received = streamed + rest;
      void stream.send(chunk({}, 'stop'));
      const usage = usageOf(answer);
      if (includeUsage)
        void stream.send({
          id,
          object: 'chat.completion.chunk',
          created,
          model: prepared.model,
          choices: [],
          usage: usage ?? null,
        });
      await chat.remember(prepared, received);
    }
  } catch (error) {
    request.log.warn({ err: error }, 'a streamed chat completion failed');
    void stream.send(openAiError(problemOf(error)));
  } finally {
    void stream.sendData('[DONE]');
    stream.close();
  }
}
