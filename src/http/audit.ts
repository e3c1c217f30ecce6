import { Type } from '@sinclair/typebox';
import type { AuditLedger } from '../ops/audit.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The audit ledger, read-only (`/auditstore`, BEHAVIOUR §17.4): a conversation's entries in sequence order, their
 * number, and the verification of their HMAC chain. An unknown conversation simply has no entries.
 */

const ConversationParams = Type.Object({
  conversationId: Type.String({ maxLength: 200, description: 'conversation id' }),
});
const PageQuery = Type.Object({
  skip: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'entries to skip' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'entries to return' })),
});

const Free = Type.Record(Type.String(), Type.Unknown());
const Entry = Type.Object(
  {
    id: Type.String(),
    conversationId: Type.String(),
    agentId: Type.String(),
    agentVersion: Type.Integer(),
    userId: Type.String(),
    environment: Type.String(),
    stepIndex: Type.Integer({ description: 'conversation step the task ran in (0 = the start)' }),
    workflowId: Type.String(),
    taskId: Type.String({ description: '<workflowId>:<position in the workflow>' }),
    taskType: Type.String({ description: 'task type id, e.g. ai.svc.parser' }),
    taskIndex: Type.Integer({ description: 'position of the task in the whole pipeline' }),
    durationMs: Type.Number(),
    actions: Type.Array(Type.String(), { description: 'the step actions after the task' }),
    input: Free,
    output: Type.Record(Type.String(), Type.Unknown(), {
      description: 'step data the task wrote, bounded, secrets masked',
    }),
    llmDetail: Type.Union([Free, Type.Null()]),
    outcome: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
    error: Type.Union([Type.String(), Type.Null()]),
    timestamp: Type.String({ format: 'date-time' }),
    sequence: Type.Integer({ description: 'per conversation, strictly increasing from 1' }),
    previousHmac: Type.Union([Type.String(), Type.Null()]),
    hmac: Type.Union([Type.String(), Type.Null()], { description: 'v1:<hex HMAC-SHA256>; null when stored unsigned' }),
  },
  { title: 'AuditEntry', additionalProperties: true },
);

const Verification = Type.Object(
  {
    conversationId: Type.String(),
    signingEnabled: Type.Boolean({
      description: 'false without svc.vault.master-key: entries are unsigned and only the numbering is checked',
    }),
    entriesChecked: Type.Integer(),
    valid: Type.Integer(),
    invalid: Type.Integer({ description: 'entries whose signature or link to the previous entry fails' }),
    unsigned: Type.Integer(),
    missingSequences: Type.Array(Type.Integer(), { description: 'gaps the chain does not bridge (entries removed)' }),
    undeliveredSequences: Type.Array(Type.Integer(), {
      description: 'gaps the chain bridges (entries never written: queue overflow, dead-lettered)',
    }),
    duplicateSequences: Type.Array(Type.Integer()),
    intact: Type.Boolean(),
    tamperingSuspected: Type.Boolean(),
    problems: Type.Array(
      Type.Object({
        entryId: Type.String(),
        sequence: Type.Integer(),
        status: Type.String({ description: 'tampered, chain-broken, unsigned, duplicate or unreadable' }),
      }),
    ),
    verifiedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'AuditVerification' },
);

const Problem = Type.Object({}, { additionalProperties: true, description: 'problem details' });

export async function auditRoutes(app: TypedApp, deps: { ledger: AuditLedger }): Promise<void> {
  const { ledger } = deps;
  const tags = ['audit'];

  app.get(
    '/auditstore/:conversationId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "A conversation's audit entries in sequence order",
        description: 'One entry per executed task per turn. An unknown conversation has none (200 with []).',
        params: ConversationParams,
        querystring: PageQuery,
        response: { 200: Type.Array(Entry), 400: Problem },
      },
    },
    async (request) => ledger.list(request.params.conversationId, request.query.skip ?? 0, request.query.limit ?? 100),
  );

  app.get(
    '/auditstore/:conversationId/count',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "Number of a conversation's audit entries",
        params: ConversationParams,
        response: { 200: Type.Integer() },
      },
    },
    async (request) => ledger.count(request.params.conversationId),
  );

  app.get(
    '/auditstore/verify/:conversationId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "Verifies a conversation's audit chain",
        description:
          "Checks each entry's HMAC, its link to the entry before it and the sequence numbering (gaps, duplicates).",
        params: ConversationParams,
        response: { 200: Verification },
      },
    },
    async (request) => ledger.verify(request.params.conversationId),
  );
}
