import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { kindNamed } from '../resources/kinds.ts';
import { junitXml } from '../transcripts/junit.ts';
import { RUN_MODES, type SuiteRun, type TranscriptRun, type TranscriptRunService } from '../transcripts/runs.ts';
import { resourceOriginOf, SpaceQuery } from './auth.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Conversation regression tests (issue 21): recording a transcript from a conversation, running transcripts and
 * suites against an agent version, and their stored runs (JSON, or JUnit XML with `Accept: application/xml` or
 * `?format=junit`).
 */

const transcripts = kindNamed('transcript').storePath;
const suites = kindNamed('transcriptsuite').storePath;

const RunBody = Type.Object(
  {
    agentId: Type.String({ description: 'the agent to replay against' }),
    agentVersion: Type.Integer({ minimum: 1, description: 'its version (deployed or not)' }),
    mode: Type.Optional(
      Type.Union(
        RUN_MODES.map((mode) => Type.Literal(mode)),
        {
          description:
            'recorded (the default): HTTP calls and LLM calls are answered from the recordings (no network); live-llm: HTTP calls from the recordings, LLM calls live (for judge comparisons); live: every call live',
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'TranscriptRunRequest' },
);

const FormatQuery = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'the version to run; the current one when absent' }),
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('junit')], {
        description: 'junit: the result as JUnit XML (also with Accept: application/xml)',
      }),
    ),
  },
  { additionalProperties: true },
);

const FieldResultSchema = Type.Object({
  field: Type.String({ description: 'output, quickReplies, actions, properties.<name>, recordings or error' }),
  compare: Type.String(),
  passed: Type.Boolean(),
  expected: Type.Optional(Type.Unknown()),
  actual: Type.Optional(Type.Unknown()),
  diff: Type.Optional(Type.String({ description: 'how expected and actual differ' })),
});

const StepResultSchema = Type.Object({
  step: Type.Integer({ description: '0 is the conversation start' }),
  input: Type.String(),
  passed: Type.Boolean(),
  conversationState: Type.String(),
  fields: Type.Array(FieldResultSchema),
});

const runFields = {
  id: Type.String(),
  agentId: Type.String(),
  agentVersion: Type.Integer(),
  mode: Type.String(),
  startedOn: Type.Integer({ description: 'epoch milliseconds' }),
  finishedOn: Type.Integer({ description: 'epoch milliseconds' }),
  passed: Type.Boolean(),
};

export const TranscriptRunSchema = Type.Object(
  {
    ...runFields,
    transcriptId: Type.String(),
    transcriptVersion: Type.Integer(),
    transcriptName: Type.String(),
    suiteRunId: Type.Optional(Type.String()),
    conversationId: Type.Optional(Type.String({ description: 'the conversation of the replay' })),
    error: Type.Optional(Type.String({ description: 'why the transcript could not be replayed at all' })),
    steps: Type.Array(StepResultSchema),
  },
  { title: 'TranscriptRun' },
);

const SuiteRunSchema = Type.Object(
  {
    ...runFields,
    suiteId: Type.String(),
    suiteVersion: Type.Integer(),
    suiteName: Type.String(),
    runs: Type.Array(TranscriptRunSchema),
  },
  { title: 'TranscriptSuiteRun' },
);

const RunSummarySchema = Type.Object(runFields, { title: 'TranscriptRunSummary' });

const IdParams = Type.Object({ id: Type.String() });
const RunParams = Type.Object({ id: Type.String(), runId: Type.String() });

const asJunit = (request: FastifyRequest<{ Querystring: { format?: string } }>) =>
  request.query.format === 'junit' ||
  (request.query.format === undefined && /\b(?:application|text)\/xml\b/.test(request.headers.accept ?? ''));

function withFormat(schema: typeof TranscriptRunSchema | typeof SuiteRunSchema, description: string) {
  return {
    200: {
      description,
      content: {
        'application/json': { schema },
        'application/xml': { schema: { type: 'string', description: 'JUnit XML' } },
      },
    },
  };
}

function send(reply: FastifyReply, junit: boolean, name: string, result: TranscriptRun | SuiteRun) {
  if (!junit) return reply.type('application/json; charset=utf-8').send(result);
  const runs = 'runs' in result ? result.runs : [result];
  return reply.type('application/xml; charset=utf-8').send(junitXml(name, runs));
}

export async function transcriptRoutes(app: TypedApp, deps: { runs: TranscriptRunService }): Promise<void> {
  const { runs } = deps;
  const tags = ['transcriptstore'];

  app.post(
    `${transcripts}/from-conversation/:conversationId`,
    {
      config: { access: { roles: 'write', rule: 'the caller must see the conversation' } },
      schema: {
        tags,
        summary: "Record a conversation as a new transcript: its inputs, context, results and external calls' answers",
        params: Type.Object({ conversationId: Type.String() }),
        querystring: SpaceQuery,
        response: {
          201: {
            description: 'Created; `Location` holds the svc:// reference of the transcript',
            headers: { Location: { type: 'string' } },
            type: 'null',
          },
        },
      },
    },
    async (request, reply) => {
      const uri = await runs.record(
        request.params.conversationId,
        resourceOriginOf(request, request.query.space),
        request.caller,
      );
      return reply.code(201).header('Location', uri).send();
    },
  );

  for (const [kind, base, schema] of [
    ['transcript', transcripts, TranscriptRunSchema],
    ['transcriptsuite', suites, SuiteRunSchema],
  ] as const) {
    const what = kind === 'transcript' ? 'transcript' : 'suite';
    app.post(
      `${base}/:id/runs`,
      {
        config: { access: { roles: 'write', level: 'USE', rule: 'EDIT on the agent (the run deploys it into test)' } },
        schema: {
          tags,
          summary: `Run a ${what} against an agent version and store the result`,
          description:
            'The version is deployed privately into the test environment (and undeployed afterwards unless it was deployed there already); each transcript replays in a fresh conversation.',
          params: IdParams,
          querystring: FormatQuery,
          body: RunBody,
          response: withFormat(schema, 'The run: pass or fail per step and per field, with diffs'),
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { version } = request.query;
        const runRequest = { ...request.body, mode: request.body.mode ?? 'recorded' };
        const result =
          kind === 'transcript'
            ? await runs.runTranscript(id, version, runRequest, request.caller)
            : await runs.runSuite(id, version, runRequest, request.caller);
        return send(reply, asJunit(request), `${what} ${id}`, result);
      },
    );

    app.get(
      `${base}/:id/runs`,
      {
        config: { access: { roles: 'read', level: 'USE' } },
        schema: {
          tags,
          summary: `The stored runs of a ${what}, newest first (at most 100)`,
          params: IdParams,
          response: { 200: Type.Array(RunSummarySchema) },
        },
      },
      async (request) => runs.listRuns(kind, request.params.id, request.caller),
    );

    app.get(
      `${base}/:id/runs/:runId`,
      {
        config: { access: { roles: 'read', level: 'USE' } },
        schema: {
          tags,
          summary: `One stored run of a ${what}`,
          params: RunParams,
          querystring: FormatQuery,
          response: withFormat(schema, 'The run'),
        },
      },
      async (request, reply) => {
        const { id, runId } = request.params;
        const result = (await runs.readRun(kind, id, runId, request.caller)) as TranscriptRun | SuiteRun;
        return send(reply, asJunit(request), `${what} ${id}`, result);
      },
    );
  }
}
