import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ConversationService } from '../runtime/conversations.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import { DECISIONS, type PendingApproval } from '../runtime/human-approval.ts';
import type { Conversation } from '../runtime/memory.ts';
import { ConversationSnapshotSchema, snapshot } from '../runtime/snapshot.ts';
import type { AuthorizeResource } from '../security/access.ts';
import type { ApprovalEvents } from '../runtime/approval-events.ts';
import { openEventStream } from './event-stream.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Human in the loop over HTTP (the original's paths): the turns waiting for a person, one conversation's waiting
 * turn, the decision that resumes it, and a live feed for the manager's inbox. A caller whom access checks apply
 * to sees and decides only the waiting turns of agents it may USE.
 */

const ToolCallSchema = Type.Object({
  toolCallId: Type.String(),
  tool: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
});

export const PendingApprovalSchema = Type.Object(
  {
    approvalId: Type.String({ description: 'names this waiting turn; a decision may repeat it (409 once decided)' }),
    conversationId: Type.String(),
    agentId: Type.String(),
    agentVersion: Type.Integer(),
    userId: Type.String(),
    environment: Type.String(),
    pauseType: Type.Union([Type.Literal('pause'), Type.Literal('tool-approval')], {
      description: 'pause: a rule added PAUSE_CONVERSATION; tool-approval: the model called tools that need approval',
    }),
    task: Type.String({ description: 'the task type that paused the turn' }),
    pausedAt: Type.Integer({ description: 'epoch milliseconds' }),
    input: Type.String({ description: 'the user message of the waiting turn' }),
    output: Type.Array(Type.String(), { description: 'what the agent said in the waiting turn so far' }),
    toolCalls: Type.Array(ToolCallSchema, { description: 'the tool calls waiting for approval' }),
    queuedMessages: Type.Integer({ description: 'messages that arrived meanwhile; they run after the decision' }),
    escalated: Type.Boolean({ description: 'nobody decided in time and the timeout policy is escalate' }),
  },
  { title: 'PendingApproval' },
);

const DecisionBody = Type.Object(
  {
    decision: Type.Union(
      DECISIONS.map((decision) => Type.Literal(decision)),
      {
        description:
          "approve: go on where the turn paused; reject: end the turn (a rejected tool call is reported to the model, which answers); answer: end the turn with `answer` as the agent's answer",
      },
    ),
    approvalId: Type.Optional(Type.String({ description: 'the waiting turn decided on (409 when it is not waiting)' })),
    answer: Type.Optional(Type.String({ description: 'with decision answer: the text the user gets' })),
    reason: Type.Optional(Type.String({ maxLength: 2000, description: 'why; recorded in the audit ledger' })),
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
        description: 'with decision approve: edited arguments per tool call id',
      }),
    ),
  },
  { additionalProperties: false },
);

const ConversationParams = Type.Object({ conversationId: Type.String() });

export async function approvalRoutes(
  app: TypedApp,
  deps: { conversations: ConversationService; authorize: AuthorizeResource; events: ApprovalEvents },
): Promise<void> {
  const { conversations, authorize, events } = deps;
  const tags = ['human in the loop'];
  const visibleTo = (request: FastifyRequest) => async (conversation: Conversation) => {
    if (!request.caller?.restricted) return true;
    return authorize(conversation.agentId, request.caller, 'USE').then(
      () => true,
      () => false,
    );
  };
  const filterQuery = Type.Object(
    { agentId: Type.Optional(Type.String()), environment: Type.Optional(Type.String()) },
    { additionalProperties: true },
  );
  const listFor = (
    request: FastifyRequest,
    query: { agentId?: string | undefined; environment?: string | undefined },
  ) =>
    conversations.pendingApprovals(
      {
        agentId: query.agentId,
        environment: query.environment === undefined ? undefined : normalizeEnvironment(query.environment),
      },
      visibleTo(request),
    );

  app.get(
    '/agents/pending-approvals',
    {
      config: { access: { roles: 'approve', level: 'USE', rule: 'waiting turns of agents the caller may use' } },
      schema: {
        tags,
        summary: 'The turns waiting for a person, most recently active first',
        querystring: filterQuery,
        response: { 200: Type.Array(PendingApprovalSchema) },
      },
    },
    async (request) => listFor(request, request.query),
  );

  app.get(
    '/agents/pending-approvals/stream',
    {
      config: { access: { roles: 'approve', level: 'USE', rule: 'waiting turns of agents the caller may use' } },
      schema: {
        tags,
        summary: 'The waiting turns, live (server-sent events)',
        description:
          'Event pending-approvals (data: the list, as GET /agents/pending-approvals answers it) when the stream opens and again whenever a turn starts or stops waiting, on any instance.',
        querystring: filterQuery,
        response: { 200: { description: 'text/event-stream', type: 'string' } },
      },
    },
    async (request, reply) => {
      const stream = openEventStream(reply);
      let sending = Promise.resolve();
      const send = () => {
        sending = sending
          .then(async () => {
            if (!stream.signal.aborted) await stream.send(await listFor(request, request.query), 'pending-approvals');
          })
          .catch((error: unknown) =>
            request.log.warn({ err: error }, 'the pending-approvals stream could not be updated'),
          );
      };
      const unsubscribe = events.subscribe(send);
      stream.signal.addEventListener('abort', unsubscribe, { once: true });
      send();
    },
  );

  app.get(
    '/agents/:conversationId/approval-status',
    {
      config: { access: { roles: 'approve', level: 'USE', rule: 'waiting turns of agents the caller may use' } },
      schema: {
        tags,
        summary: "The conversation's waiting turn ({waiting: false} when none waits)",
        params: ConversationParams,
        response: {
          200: Type.Object({
            waiting: Type.Boolean(),
            approval: Type.Optional(PendingApprovalSchema),
          }),
        },
      },
    },
    async (request) => {
      const approval: PendingApproval | undefined = await conversations.pendingApproval(
        request.params.conversationId,
        visibleTo(request),
      );
      return approval ? { waiting: true, approval } : { waiting: false };
    },
  );

  app.post(
    '/agents/:conversationId/resume',
    {
      config: { access: { roles: 'approve', level: 'USE', rule: 'waiting turns of agents the caller may use' } },
      schema: {
        tags,
        summary: 'Decide on the waiting turn: it goes on where it paused (or ends as decided)',
        description:
          'The decision goes to the audit ledger with who made it; then the messages queued meanwhile run in order. The answer is the conversation after all of that.',
        params: ConversationParams,
        body: DecisionBody,
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      const { decision, approvalId, answer, reason, arguments: edited } = request.body;
      const actor = request.caller?.principal.name ?? 'anonymous';
      const conversation = await conversations.resume(
        request.params.conversationId,
        { action: decision, answer, reason, arguments: edited, actor },
        approvalId,
        visibleTo(request),
      );
      return snapshot(conversation, { returnDetailed: false, returnCurrentStepOnly: true });
    },
  );
}
