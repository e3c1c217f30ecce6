import type { Expectation, Expected, Transcript } from '../resources/schemas/transcript.ts';
import type { Conversation, StoredStep } from '../runtime/memory.ts';
import { TURN_ERROR_KEY } from '../runtime/pipeline.ts';
import { outputTexts } from '../runtime/snapshot.ts';
import { isRecord } from '../shared/json.ts';
import type { LlmServices } from '../tasks/llm/llm-task.ts';
import { asText, compareField, type FieldVerdict } from './compare.ts';
import { decisionField, type Waiting } from './decide.ts';
import { judgeAnswer } from './judge.ts';
import type { RecordedCalls } from './recorded-calls.ts';

/** The verdict on one replayed step: its recording mismatches, a failed turn, and every expected field. */

export interface FieldResult {
  /**
   * `output`, `quickReplies`, `actions`, `properties.<name>`, `recordings` (a recording mismatch), `decision` (the
   * turn did not wait for a person as recorded) or `error`.
   */
  readonly field: string;
  readonly compare: string;
  readonly passed: boolean;
  readonly expected?: unknown;
  readonly actual?: unknown;
  readonly diff?: string;
}

export interface StepResult {
  /** 0 is the conversation start, n the n-th turn. */
  readonly step: number;
  readonly input: string;
  readonly passed: boolean;
  readonly conversationState: string;
  readonly fields: FieldResult[];
}

export interface StepToCheck {
  readonly transcript: Transcript;
  readonly number: number;
  readonly input: string;
  readonly expected: Expected | undefined;
  /** The conversation after the step: its last step is the one checked. */
  readonly conversation: Conversation;
  /** The step's recorded calls (undefined when every call went live). */
  readonly calls: RecordedCalls | undefined;
  /** How the replayed turn waited for a person (`decideAsRecorded`). */
  readonly waiting: Waiting;
}

/** Compares the conversation's last step with what the transcript expects of it. */
export async function checkStep(check: StepToCheck, llm: LlmServices | undefined): Promise<StepResult> {
  const { transcript, input, conversation } = check;
  const step = conversation.steps.at(-1)!;
  const fields: FieldResult[] = [];
  const mismatches = check.calls?.mismatches() ?? [];
  for (const mismatch of mismatches)
    fields.push({ field: 'recordings', compare: 'recording', passed: false, diff: mismatch });
  const failure = step.output[TURN_ERROR_KEY];
  if (typeof failure === 'string' && mismatches.length === 0)
    fields.push({
      field: 'error',
      compare: 'exact',
      passed: false,
      actual: failure,
      diff: `the turn failed: ${failure}`,
    });
  const decision = decisionField(check.waiting);
  if (decision) fields.push(decision);
  for (const [field, expectation, actual] of expectedFields(check.expected, step)) {
    const verdict: FieldVerdict =
      expectation.compare === 'judge'
        ? await judgeAnswer(llm, transcript.judge!, { input, rubric: expectation.rubric ?? '', answer: asText(actual) })
        : compareField(expectation, actual);
    fields.push({
      field,
      compare: expectation.compare ?? 'exact',
      passed: verdict.passed,
      ...(expectation.value === undefined ? {} : { expected: expectation.value }),
      actual,
      ...(verdict.diff === undefined ? {} : { diff: verdict.diff }),
    });
  }
  return {
    step: check.number,
    input,
    passed: fields.every((field) => field.passed),
    conversationState: conversation.state,
    fields,
  };
}

/** A step that could not run at all (the turn was refused, the conversation had ended). */
export function failedStep(step: number, input: string, state: string, reason: string): StepResult {
  return {
    step,
    input,
    passed: false,
    conversationState: state,
    fields: [{ field: 'error', compare: 'exact', passed: false, diff: reason }],
  };
}

/** Each expected field with its expectation and the step's actual value. */
function expectedFields(
  expected: Expected | undefined,
  step: StoredStep,
): Array<[field: string, expectation: Expectation, actual: unknown]> {
  if (!expected) return [];
  const { output } = step;
  const fields: Array<[string, Expectation, unknown]> = [];
  if (expected.output) fields.push(['output', expected.output, outputTexts(output.output)]);
  if (expected.quickReplies) fields.push(['quickReplies', expected.quickReplies, output.quickReplies ?? []]);
  if (expected.actions) fields.push(['actions', expected.actions, output.actions ?? []]);
  const setInStep = isRecord(output.properties) ? output.properties : {};
  for (const [name, expectation] of Object.entries(expected.properties ?? {})) {
    const actual = Object.hasOwn(setInStep, name) ? setInStep[name] : step.properties[name]?.value;
    fields.push([`properties.${name}`, expectation, actual]);
  }
  return fields;
}
