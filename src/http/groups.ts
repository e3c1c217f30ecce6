import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from '../errors.ts';
import type { DiscussionEvents } from '../groups/discussion.ts';
import type { GroupService, Question } from '../groups/group-service.ts';
import { PHASE_TYPES } from '../resources/schemas/group.ts';
import { ContextSchema } from '../resources/schemas/common.ts';
import { parseContext } from '../runtime/context.ts';
import { openEventStream } from './event-stream.ts';
import { problemOf } from './problems.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Group conversations (issue 18): discussions of a group (`/groupstore/groups`), their transcripts and follow-up
 * questions, answered whole or as server-sent events (a `phase` event as each phase starts, a `contribution` event
 * as each participant answers, then `done` with the discussion, or `error` with a problem).
 */

const tags = ['groups'];
const GroupParams = Type.Object({ groupId: Type.String() });
const DiscussionParams = Type.Object({ groupId: Type.String(), discussionId: Type.String() });
const QuestionBody = Type.Object(
  {
    input: Type.String({ minLength: 1, description: 'the question' }),
    context: Type.Optional(ContextSchema),
  },
  { additionalProperties: false, title: 'GroupQuestion' },
);

const SpeakerSchema = Type.Object({
  member: Type.Optional(Type.Integer({ description: "index in the group's members; absent for the moderator" })),
  agentId: Type.String(),
  displayName: Type.String(),
  role: Type.Optional(Type.String()),
});

const ContributionSchema = Type.Object(
  {
    question: Type.Integer({ description: 'index of the question (0, then the follow-ups)' }),
    phase: Type.String(),
    phaseType: Type.Union(PHASE_TYPES.map((type) => Type.Literal(type))),
    speaker: SpeakerSchema,
    about: Type.Optional(Type.String({ description: 'a review of one peer: whose answer' })),
    status: Type.Union([Type.Literal('OK'), Type.Literal('FAILED'), Type.Literal('TIMEOUT')]),
    text: Type.Optional(Type.String()),
    error: Type.Optional(Type.String()),
    conversationId: Type.Optional(Type.String()),
    startedOn: Type.Number(),
    finishedOn: Type.Number(),
  },
  { title: 'GroupContribution' },
);

const QuestionSchema = Type.Object({
  input: Type.String(),
  synthesis: Type.Optional(Type.String({ description: "the moderator's conclusion" })),
});

const ParticipantSchema = Type.Object({
  ...SpeakerSchema.properties,
  conversationId: Type.Optional(Type.String({ description: 'its conversation with its agent' })),
});

const DiscussionSchema = Type.Object(
  {
    id: Type.String(),
    groupId: Type.String(),
    groupVersion: Type.Integer(),
    style: Type.String(),
    state: Type.Union([Type.Literal('RUNNING'), Type.Literal('DONE')]),
    createdOn: Type.Number(),
    lastModifiedOn: Type.Number(),
    questions: Type.Array(QuestionSchema),
    participants: Type.Array(ParticipantSchema),
    moderator: ParticipantSchema,
    contributions: Type.Array(ContributionSchema, { description: 'who said what in which phase, in order' }),
  },
  { title: 'GroupDiscussion' },
);

const SummarySchema = Type.Object(
  {
    id: Type.String(),
    groupId: Type.String(),
    state: Type.String(),
    createdOn: Type.Number(),
    lastModifiedOn: Type.Number(),
    questions: Type.Array(QuestionSchema),
  },
  { title: 'GroupDiscussionSummary' },
);

const STREAM_DESCRIPTION =
  'Events: phase ({name, type, participants, turnOrder, contextScope}) as each phase starts, contribution (a transcript entry) as each participant answers, then done (the discussion) or error (a problem).';

function questionOf(body: { input: string; context?: unknown }): Question {
  return { input: body.input, context: parseContext(body.context) };
}

/** Streams a discussion: problems found before it starts answer as ordinary problems. */
async function streamed(reply: FastifyReply, run: (events: DiscussionEvents) => Promise<unknown>) {
  let stream: ReturnType<typeof openEventStream> | undefined;
  const open = () => (stream ??= openEventStream(reply));
  try {
    const discussion = await run({
      phase: ({ name, type, participants, turnOrder, contextScope }) =>
        void open().send({ name, type, participants, turnOrder, contextScope }, 'phase'),
      contribution: (contribution) => void open().send(contribution, 'contribution'),
    });
    void open().send(discussion, 'done');
  } catch (error) {
    if (stream === undefined) throw error;
    if (!(error instanceof AppError)) reply.log.error({ err: error }, 'streamed discussion failed');
    void stream.send(problemOf(error), 'error');
  } finally {
    stream?.close();
  }
  return reply;
}

export async function groupRoutes(app: TypedApp, deps: { groups: GroupService }): Promise<void> {
  const { groups } = deps;
  const access = { roles: 'converse' as const, level: 'USE' as const, rule: 'USE on every agent of the group' };
  const location = (groupId: string, id: string) => `/groups/${groupId}/conversations/${id}`;

  app.post(
    '/groups/:groupId/conversations',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Run a discussion of the group on a question; answers the transcript and the synthesis',
        params: GroupParams,
        body: QuestionBody,
        response: { 201: DiscussionSchema },
      },
    },
    async (request, reply) => {
      const discussion = await groups.start(request.params.groupId, questionOf(request.body), request.caller);
      return reply.code(201).header('Location', location(discussion.groupId, discussion.id)).send(discussion);
    },
  );

  app.post(
    '/groups/:groupId/conversations/stream',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Run a discussion and follow it as server-sent events',
        description: STREAM_DESCRIPTION,
        params: GroupParams,
        body: QuestionBody,
        response: { 200: { description: 'text/event-stream', type: 'string' } },
      },
    },
    (request, reply) =>
      streamed(reply, (events) =>
        groups.start(request.params.groupId, questionOf(request.body), request.caller, events),
      ),
  );

  app.get(
    '/groups/:groupId/conversations',
    {
      config: { access: { roles: 'conversation-read', level: 'USE' } },
      schema: {
        tags,
        summary: "The group's discussions, newest first (at most 100), without their contributions",
        params: GroupParams,
        response: { 200: Type.Array(SummarySchema) },
      },
    },
    async (request) => groups.list(request.params.groupId, request.caller),
  );

  app.get(
    '/groups/:groupId/conversations/:discussionId',
    {
      config: { access: { roles: 'conversation-read', level: 'USE' } },
      schema: {
        tags,
        summary: 'A discussion: its transcript',
        params: DiscussionParams,
        response: { 200: DiscussionSchema },
      },
    },
    async (request) => groups.get(request.params.groupId, request.params.discussionId, request.caller),
  );

  app.post(
    '/groups/:groupId/conversations/:discussionId',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Ask a follow-up question: the participants continue their conversations (409 while one runs)',
        params: DiscussionParams,
        body: QuestionBody,
        response: { 200: DiscussionSchema },
      },
    },
    async (request) =>
      groups.followUp(request.params.groupId, request.params.discussionId, questionOf(request.body), request.caller),
  );

  app.post(
    '/groups/:groupId/conversations/:discussionId/stream',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Ask a follow-up question and follow it as server-sent events',
        description: STREAM_DESCRIPTION,
        params: DiscussionParams,
        body: QuestionBody,
        response: { 200: { description: 'text/event-stream', type: 'string' } },
      },
    },
    (request, reply) =>
      streamed(reply, (events) =>
        groups.followUp(
          request.params.groupId,
          request.params.discussionId,
          questionOf(request.body),
          request.caller,
          events,
        ),
      ),
  );

  app.delete(
    '/groups/:groupId/conversations/:discussionId',
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: { tags, summary: "Delete a discussion's transcript", params: DiscussionParams },
    },
    async (request, reply) => {
      await groups.delete(request.params.groupId, request.params.discussionId, request.caller);
      return reply.code(200).send();
    },
  );
}
