import type { OutputInterface } from 'ai';
import type { ModelSpec } from '../../llm/providers.ts';
import {
  answerProblem,
  compileAnswerFormat,
  jsonAnswerOutput,
  unfencedJson,
  type AnswerFormat,
} from '../../llm/structured-answer.ts';
import { isRecord } from '../../shared/json.ts';
import type { ModelCallResult } from './model-call.ts';

/**
 * Model cascading (`modelCascade` of an LLM task): model steps tried cheapest first. Each answer is judged by the
 * `evaluationStrategy` — `structured_output` (the model answers `{answer, confidence}` and a confidence below the
 * step's `confidenceThreshold` escalates), `validator` (the answer must match `validator.pattern` and/or
 * `validator.jsonSchema`) or `failure` (only an error, a timeout or a refusal escalates); a failed step always
 * escalates. Escalation stops at the last step, and when the attempts so far cost `maxCostPerRun` or took
 * `maxTotalDurationMs`: the current answer is then taken if there is one. Every attempt is recorded (step, model,
 * outcome, reason, confidence, cost).
 */

export const EVALUATION_STRATEGIES = ['structured_output', 'validator', 'failure'] as const;
export type EvaluationStrategy = (typeof EVALUATION_STRATEGIES)[number];
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.7;

export interface CascadeStepConfig {
  readonly type: string;
  readonly parameters?: Readonly<Record<string, string>>;
  readonly confidenceThreshold?: number;
  readonly timeoutMs?: number;
}

export interface ModelCascadeConfig {
  readonly enabled?: boolean;
  readonly strategy?: string;
  readonly evaluationStrategy?: EvaluationStrategy;
  readonly validator?: { readonly pattern?: string; readonly jsonSchema?: Readonly<Record<string, unknown>> };
  readonly maxCostPerRun?: number;
  readonly maxTotalDurationMs?: number;
  readonly steps: readonly CascadeStepConfig[];
}

export interface CascadeJudge {
  readonly evaluation: EvaluationStrategy;
  readonly pattern: RegExp | undefined;
  readonly format: AnswerFormat | undefined;
  readonly maxCostPerRun: number | undefined;
  readonly maxTotalDurationMs: number | undefined;
}

/** The answer a `structured_output` step is asked for. */
const CONFIDENT_ANSWER = compileAnswerFormat({
  type: 'object',
  properties: {
    answer: { type: 'string', description: 'The answer to the user.' },
    confidence: { type: 'number', minimum: 0, maximum: 1, description: 'How sure you are that the answer is right.' },
  },
  required: ['answer', 'confidence'],
});

export function compileJudge(config: ModelCascadeConfig): CascadeJudge {
  const evaluation = config.evaluationStrategy ?? 'structured_output';
  return {
    evaluation,
    pattern: config.validator?.pattern === undefined ? undefined : new RegExp(config.validator.pattern, 'u'),
    format: config.validator?.jsonSchema === undefined ? undefined : compileAnswerFormat(config.validator.jsonSchema),
    maxCostPerRun: config.maxCostPerRun,
    maxTotalDurationMs: config.maxTotalDurationMs,
  };
}

/** The output specification the steps are called with. */
export function cascadeOutput(judge: CascadeJudge): OutputInterface<string, string, never> | undefined {
  if (judge.evaluation === 'structured_output') return jsonAnswerOutput(CONFIDENT_ANSWER);
  if (judge.evaluation === 'validator' && judge.format) return jsonAnswerOutput(judge.format);
  return undefined;
}

export interface CascadeAttempt {
  readonly step: number;
  readonly provider: string;
  readonly modelName: string;
  readonly outcome: 'accepted' | 'escalated' | 'failed';
  readonly reason?: string;
  readonly confidence?: number;
  readonly cost: number;
}

export interface CascadeRun {
  /** The accepted answer (for `structured_output`, its `answer` field). */
  readonly text: string;
  readonly result: ModelCallResult;
  readonly spec: ModelSpec;
  readonly chosenStep: number;
  readonly attempts: readonly CascadeAttempt[];
  readonly cost: number;
}

/** What running a cascade needs from the task: models, calls, costs, a clock and the metric. */
export interface CascadeIo {
  readonly steps: number;
  spec(step: number): Promise<ModelSpec>;
  call(spec: ModelSpec, step: number): Promise<ModelCallResult>;
  cost(spec: ModelSpec, result: ModelCallResult): number;
  /** The message of a failed call as it may be shown (secrets masked). */
  failure(error: unknown, spec: ModelSpec): string;
  now(): number;
  counted(attempt: CascadeAttempt): void;
}

export class CascadeFailedError extends Error {
  readonly attempts: readonly CascadeAttempt[];
  constructor(attempts: readonly CascadeAttempt[]) {
    super(
      `every step of the model cascade failed or was cut short: ${attempts
        .map((attempt) => `step ${attempt.step} (${attempt.modelName}): ${attempt.reason ?? attempt.outcome}`)
        .join('; ')}`,
    );
    this.name = 'CascadeFailedError';
    this.attempts = attempts;
  }
}

interface Judgement {
  readonly text: string | undefined;
  readonly problem: string | undefined;
  readonly confidence?: number;
}

function judge(result: ModelCallResult, judge: CascadeJudge, threshold: number): Judgement {
  if (result.finishReason === 'content-filter') return { text: undefined, problem: 'the model refused to answer' };
  if (result.text.trim() === '') return { text: undefined, problem: 'the model gave an empty answer' };
  if (judge.evaluation === 'structured_output') {
    const problem = answerProblem(result.text, CONFIDENT_ANSWER);
    if (problem !== undefined) return { text: result.text, problem };
    const parsed = JSON.parse(unfencedJson(result.text)) as { answer: string; confidence: number };
    return {
      text: parsed.answer,
      confidence: parsed.confidence,
      problem: parsed.confidence < threshold ? `confidence ${parsed.confidence} is below ${threshold}` : undefined,
    };
  }
  if (judge.evaluation === 'validator') {
    if (judge.pattern && !judge.pattern.test(result.text))
      return { text: result.text, problem: `the answer does not match the pattern ${judge.pattern.source}` };
    if (judge.format) return { text: result.text, problem: answerProblem(result.text, judge.format) };
  }
  return { text: result.text, problem: undefined };
}

export async function runCascade(
  judgeConfig: CascadeJudge,
  thresholds: readonly number[],
  io: CascadeIo,
): Promise<CascadeRun> {
  const started = io.now();
  const attempts: CascadeAttempt[] = [];
  let cost = 0;
  const record = (attempt: CascadeAttempt) => {
    attempts.push(attempt);
    io.counted(attempt);
  };
  for (let step = 0; step < io.steps; step++) {
    const spec = await io.spec(step);
    const base = { step, provider: spec.provider, modelName: spec.modelName };
    let result: ModelCallResult;
    try {
      result = await io.call(spec, step);
    } catch (error) {
      record({ ...base, outcome: 'failed', reason: io.failure(error, spec), cost: 0 });
      if (stopReason(judgeConfig, cost, io.now() - started) !== undefined) break;
      continue;
    }
    const attemptCost = io.cost(spec, result);
    cost += attemptCost;
    const judgement = judge(result, judgeConfig, thresholds[step] ?? DEFAULT_CONFIDENCE_THRESHOLD);
    const confidence = judgement.confidence === undefined ? {} : { confidence: judgement.confidence };
    const isLast = step === io.steps - 1;
    const stop = isLast ? undefined : stopReason(judgeConfig, cost, io.now() - started);
    if (judgement.text === undefined || (judgement.problem !== undefined && !isLast && stop === undefined)) {
      record({
        ...base,
        outcome: judgement.text === undefined ? 'failed' : 'escalated',
        reason: judgement.problem,
        ...confidence,
        cost: attemptCost,
      });
      if (stop !== undefined) break;
      continue;
    }
    const reason =
      judgement.problem === undefined
        ? undefined
        : `${judgement.problem}; taken because ${stop ?? 'it is the last step'}`;
    record({
      ...base,
      outcome: 'accepted',
      ...(reason === undefined ? {} : { reason }),
      ...confidence,
      cost: attemptCost,
    });
    return { text: judgement.text, result, spec, chosenStep: step, attempts, cost };
  }
  throw new CascadeFailedError(attempts);
}

function stopReason(judge: CascadeJudge, cost: number, elapsedMs: number): string | undefined {
  if (judge.maxCostPerRun !== undefined && cost >= judge.maxCostPerRun)
    return `the cost ceiling (maxCostPerRun ${judge.maxCostPerRun}) is reached`;
  if (judge.maxTotalDurationMs !== undefined && elapsedMs >= judge.maxTotalDurationMs)
    return `the time limit (maxTotalDurationMs ${judge.maxTotalDurationMs}) is reached`;
  return undefined;
}

/** Write-time problems of a `modelCascade` value beyond its schema, as [path suffix, message]. */
export function cascadeProblems(cascade: unknown, task: Record<string, unknown>): Array<[string, string]> {
  if (!isRecord(cascade) || cascade.enabled === false) return [];
  const problems: Array<[string, string]> = [];
  if (Array.isArray(cascade.steps) && cascade.steps.length === 0)
    problems.push(['steps', 'an enabled cascade needs at least one step']);
  const validator = isRecord(cascade.validator) ? cascade.validator : undefined;
  if (typeof validator?.pattern === 'string') {
    try {
      new RegExp(validator.pattern, 'u');
    } catch (error) {
      problems.push(['validator.pattern', `is not a regular expression: ${(error as Error).message}`]);
    }
  }
  if (isRecord(validator?.jsonSchema)) {
    try {
      compileAnswerFormat(validator.jsonSchema);
    } catch (error) {
      problems.push(['validator.jsonSchema', (error as Error).message]);
    }
  }
  if (
    cascade.evaluationStrategy === 'validator' &&
    validator?.pattern === undefined &&
    validator?.jsonSchema === undefined
  )
    problems.push(['validator', "the 'validator' evaluation needs validator.pattern or validator.jsonSchema"]);
  if (Array.isArray(task.toolApprovals) ? task.toolApprovals.length > 0 : isRecord(task.toolApprovals))
    problems.push([
      '',
      "tool approvals pause a turn mid-answer, which a cascade cannot judge: use 'toolApprovals' without a cascade",
    ]);
  const parameters = isRecord(task.parameters) ? task.parameters : {};
  if (task.responseSchema !== undefined || parameters.responseFormat !== undefined)
    problems.push([
      '',
      "a cascade judges the answers itself: use validator.jsonSchema instead of 'responseSchema' or the 'responseFormat' parameter",
    ]);
  return problems;
}
