import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  canonicalReference,
  checkContext,
  checkReference,
  ContextSchema,
  closed,
  fieldPath,
  indexPath,
  stringEnum,
  stringMap,
} from './common.ts';
import { answerProblem, DECISIONS, type DecisionAction, PAUSE_KINDS } from '../../runtime/human-approval.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * Conversation regression tests (issue 21): a transcript is an ordered list of turns, each with the expected
 * results of its step and how to compare each, and the recorded answers of the step's HTTP calls and LLM calls; a
 * suite is a list of transcripts run together against one agent version.
 */

export const COMPARISONS = ['exact', 'ignore', 'regex', 'contains', 'tolerance', 'subset', 'judge'] as const;
export type Comparison = (typeof COMPARISONS)[number];

export const ExpectationSchema = closed(
  {
    value: Type.Optional(
      Type.Unknown({
        description:
          'The expected value (output: list of texts; quickReplies: list of {value, expressions, isDefault}; actions: list of names; a property: its value). For regex: the pattern; for judge: unused.',
      }),
    ),
    compare: Type.Optional(
      stringEnum(
        COMPARISONS,
        'How the actual value is compared (default exact): exact (same JSON), ignore, regex (the pattern is found in the text; lists are joined by new lines), contains (the text holds the expected text, or the list holds every expected element), tolerance (numbers within `tolerance`), subset (every field and element of the expected JSON is in the actual one), judge (the judge model grades the text against `rubric`).',
      ),
    ),
    tolerance: Type.Optional(
      Type.Number({ minimum: 0, description: 'For tolerance: the largest allowed difference.' }),
    ),
    rubric: Type.Optional(Type.String({ description: 'For judge: what a good answer does.' })),
  },
  { description: 'An expected value and how to compare it.' },
);
export type Expectation = Static<typeof ExpectationSchema>;

export const ExpectedSchema = closed(
  {
    output: Type.Optional(ExpectationSchema),
    quickReplies: Type.Optional(ExpectationSchema),
    actions: Type.Optional(ExpectationSchema),
    properties: Type.Optional(
      Type.Record(Type.String(), ExpectationSchema, {
        description: 'Chosen properties by name: their value when the step ended.',
      }),
    ),
  },
  { description: 'The fields of the step that are checked; a field not named here is not checked.' },
);
export type Expected = Static<typeof ExpectedSchema>;

export const HttpCallRecordingSchema = closed(
  {
    name: Type.String({ description: 'The HTTP call.' }),
    request: closed(
      {
        method: Type.String(),
        uri: Type.String({ description: 'The full URL sent, query included (secrets shown as <REDACTED>).' }),
        body: Type.Optional(Type.String()),
      },
      { description: 'What the agent sent; a replay that sends something else is a recording mismatch.' },
    ),
    response: Type.Optional(
      closed(
        {
          status: Type.Integer({ minimum: 100, maximum: 599 }),
          headers: Type.Optional(stringMap('Response headers.')),
          body: Type.Optional(Type.Unknown({ description: 'JSON, or text.' })),
        },
        { description: 'The answer replayed; absent for a fire-and-forget call.' },
      ),
    ),
    byTool: Type.Optional(
      Type.Boolean({
        description:
          "Made by an LLM task's tool: while LLM answers come from the recording (which stands for the whole tool loop) the call may be left out.",
      }),
    ),
  },
  { description: 'One HTTP call of the step, in the order the agent made them.' },
);
export type HttpCallRecording = Static<typeof HttpCallRecordingSchema>;

export const LlmRecordingSchema = closed(
  {
    task: Type.String({ description: 'Id of the LLM task.' }),
    answer: Type.String({ description: "The model's answer." }),
  },
  { description: 'One LLM answer of the step.' },
);
export type LlmRecording = Static<typeof LlmRecordingSchema>;

export const RetrievalRecordingSchema = closed(
  {
    task: Type.String({ description: 'Id of the LLM task.' }),
    sources: Type.Array(
      closed({
        knowledgeBase: Type.String({ description: 'Name of the knowledge base.' }),
        documentId: Type.String(),
        documentName: Type.String(),
        chunkIndex: Type.Integer({ minimum: 0 }),
        text: Type.String(),
        score: Type.Number(),
      }),
      { description: 'The passages found, best first.' },
    ),
  },
  {
    description:
      "What an LLM task's knowledge-base retrieval found in the step; replayed without embedding the query or searching.",
  },
);
export type RetrievalRecording = Static<typeof RetrievalRecordingSchema>;

export const RecordingsSchema = closed(
  {
    httpCalls: Type.Optional(Type.Array(HttpCallRecordingSchema)),
    llm: Type.Optional(Type.Array(LlmRecordingSchema)),
    retrieval: Type.Optional(Type.Array(RetrievalRecordingSchema)),
  },
  { description: 'Answers of external calls, replayed instead of reaching the network.' },
);
export type Recordings = Static<typeof RecordingsSchema>;

export const RecordedDecisionSchema = closed(
  {
    action: stringEnum(
      DECISIONS,
      "What the person decided: approve (the turn goes on), reject, or answer (the text in 'answer' is the agent's answer).",
    ),
    answer: Type.Optional(Type.String({ description: 'For answer: what the person answered.' })),
    reason: Type.Optional(Type.String({ description: 'Why, as the person said.' })),
    pauseType: Type.Optional(
      stringEnum(
        PAUSE_KINDS,
        "What waited: a rule's pause (default) or an LLM task's tool calls (tool-approval; while LLM answers come from the recording, which stands for the whole tool loop, the replayed turn does not wait).",
      ),
    ),
  },
  {
    description:
      "The person's decision when the step's turn waited for a person (human in the loop); a replayed turn that waits gets the same decision, one that does not wait fails the step.",
  },
);
export type RecordedDecision = Static<typeof RecordedDecisionSchema>;

const stepFields = {
  context: Type.Optional(ContextSchema),
  expected: Type.Optional(ExpectedSchema),
  recordings: Type.Optional(RecordingsSchema),
  decision: Type.Optional(RecordedDecisionSchema),
};

export const TranscriptTurnSchema = closed(
  { input: Type.String({ description: "The user's message." }), ...stepFields },
  { description: 'One message and what its step must give.' },
);
export type TranscriptTurn = Static<typeof TranscriptTurnSchema>;

export const JudgeSchema = closed(
  {
    type: Type.String({ description: 'Provider type, as in an LLM task (openai, anthropic, ollama, ...).' }),
    parameters: stringMap('Provider parameters as in an LLM task (modelName, baseUrl, apiKey as ${vault:NAME}, ...).'),
  },
  { description: 'The model that grades answers compared with `judge`.' },
);

export const TranscriptSchema = closed(
  {
    agentId: Type.Optional(Type.String({ description: 'The agent it was recorded from (informative).' })),
    agentVersion: Type.Optional(Type.Integer({ minimum: 1, description: 'The version it was recorded from.' })),
    start: Type.Optional(
      closed(stepFields, { description: 'The conversation start (step 0, action CONVERSATION_START).' }),
    ),
    turns: Type.Array(TranscriptTurnSchema, { description: 'The messages, in order.' }),
    judge: Type.Optional(JudgeSchema),
  },
  { title: 'Transcript', description: 'A conversation regression test.' },
);
export type Transcript = Static<typeof TranscriptSchema>;

export const TranscriptSuiteSchema = closed(
  {
    transcripts: Type.Array(Type.String(), {
      description:
        'Transcript references (svc://ai.svc.transcript/transcriptstore/transcripts/<id>?version=<n>), run in order.',
    }),
  },
  { title: 'TranscriptSuite', description: 'Transcripts run together against one agent version.' },
);

const MAX_PATTERN_LENGTH = 1000;

function checkExpectation(expectation: unknown, path: string, hasJudge: boolean): SemanticProblem[] {
  if (!isRecord(expectation)) return [];
  const compare = expectation.compare ?? 'exact';
  const problems: SemanticProblem[] = [];
  if (compare === 'regex') {
    const pattern = expectation.value;
    if (typeof pattern !== 'string' || pattern.length > MAX_PATTERN_LENGTH)
      problems.push({
        path,
        message: `${path}.value must be a regular expression of at most ${MAX_PATTERN_LENGTH} characters.`,
      });
    else {
      try {
        new RegExp(pattern, 'u');
      } catch (error) {
        problems.push({ path, message: `${path}.value is not a regular expression: ${(error as Error).message}` });
      }
    }
  }
  if (compare === 'tolerance' && (typeof expectation.value !== 'number' || typeof expectation.tolerance !== 'number'))
    problems.push({ path, message: `${path}: compare tolerance needs a numeric value and a tolerance.` });
  if (compare === 'judge') {
    if (typeof expectation.rubric !== 'string' || expectation.rubric.trim() === '')
      problems.push({ path, message: `${path}: compare judge needs a rubric.` });
    if (!hasJudge) problems.push({ path, message: `${path}: compare judge needs the transcript's judge model.` });
  }
  if (compare !== 'tolerance' && expectation.tolerance !== undefined)
    problems.push({ path, message: `${path}.tolerance is only read by compare tolerance.` });
  if (compare !== 'judge' && expectation.rubric !== undefined)
    problems.push({ path, message: `${path}.rubric is only read by compare judge.` });
  return problems;
}

function checkDecision(step: Record<string, unknown>, path: string): SemanticProblem[] {
  const decision = step.decision;
  if (!isRecord(decision)) return [];
  const at = fieldPath(path, 'decision');
  const answer = typeof decision.answer === 'string' ? decision.answer : undefined;
  const problem = answerProblem(decision.action as DecisionAction, answer);
  return problem === undefined ? [] : [{ path: at, message: `${at}: ${problem}` }];
}

function checkStep(step: unknown, path: string, hasJudge: boolean): SemanticProblem[] {
  if (!isRecord(step)) return [];
  if (!isRecord(step.expected))
    return [...checkContext(step.context, fieldPath(path, 'context')), ...checkDecision(step, path)];
  const expected = step.expected;
  const at = fieldPath(path, 'expected');
  const problems = [
    ...checkContext(step.context, fieldPath(path, 'context')),
    ...checkDecision(step, path),
    ...['output', 'quickReplies', 'actions'].flatMap((field) =>
      checkExpectation(expected[field], fieldPath(at, field), hasJudge),
    ),
  ];
  if (isRecord(expected.properties))
    for (const [name, expectation] of Object.entries(expected.properties))
      problems.push(...checkExpectation(expectation, fieldPath(fieldPath(at, 'properties'), name), hasJudge));
  return problems;
}

export const transcriptKind: ResourceKindDefinition = {
  ...kindNamed('transcript'),
  schema: TranscriptSchema,
  renameAliases: aliasRenamer({}, TranscriptSchema),
  agentOwned: {
    ownerOf: (body) => (isRecord(body) && typeof body.agentId === 'string' ? body.agentId : undefined),
    bind: (body, agentId, agentVersion) => (isRecord(body) ? { ...body, agentId, agentVersion } : body),
  },
  checkSemantics: (body) => {
    if (!isRecord(body)) return [];
    const hasJudge = isRecord(body.judge);
    const turns = Array.isArray(body.turns) ? body.turns : [];
    return [
      ...checkStep(body.start, '$.start', hasJudge),
      ...turns.flatMap((turn, i) => checkStep(turn, indexPath('$.turns', i), hasJudge)),
    ];
  },
};

export const transcriptSuiteKind: ResourceKindDefinition = {
  ...kindNamed('transcriptsuite'),
  schema: TranscriptSuiteSchema,
  renameAliases: aliasRenamer({ fields: { transcripts: { value: canonicalReference } } }, TranscriptSuiteSchema),
  checkSemantics: (body) =>
    isRecord(body) && Array.isArray(body.transcripts)
      ? body.transcripts.flatMap((uri, i) => checkReference(uri, indexPath('$.transcripts', i), ['transcript']) ?? [])
      : [],
  references: (body) =>
    isRecord(body) && Array.isArray(body.transcripts)
      ? body.transcripts.map((_, i) => ({ path: ['transcripts', i], kind: 'transcript' as const }))
      : [],
};
