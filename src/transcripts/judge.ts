import { redact } from '../security/secret-references.ts';
import type { LlmServices } from '../tasks/llm/llm-task.ts';
import { callModel } from '../tasks/llm/model-call.ts';
import type { FieldVerdict } from './compare.ts';

/**
 * `compare: judge`: a configured model grades a replayed answer against a rubric. It is told to answer with
 * PASS or FAIL on the first line and why on the next; anything else counts as FAIL.
 */

export interface JudgeModel {
  readonly type: string;
  readonly parameters: Readonly<Record<string, string>>;
}

const JUDGE_TIMEOUT_MILLIS = 60_000;

const INSTRUCTIONS = [
  'You grade the answer of a conversational agent against a rubric.',
  'Reply with PASS or FAIL alone on the first line, then one sentence saying why.',
].join(' ');

export async function judgeAnswer(
  services: LlmServices | undefined,
  judge: JudgeModel,
  question: { readonly input: string; readonly rubric: string; readonly answer: string },
): Promise<FieldVerdict> {
  if (!services) return { passed: false, diff: 'the judge cannot be asked: LLM tasks are not available here' };
  const secretValues: string[] = [];
  try {
    const parameters: Record<string, string> = {};
    for (const [name, value] of Object.entries(judge.parameters)) {
      const resolved = await services.secrets.resolve(value);
      secretValues.push(...resolved.secretValues);
      parameters[name] = resolved.text;
    }
    const result = await callModel({
      spec: await services.models.spec(judge.type, parameters),
      system: INSTRUCTIONS,
      messages: [
        {
          role: 'user',
          content: `Rubric:\n${question.rubric}\n\nUser message:\n${question.input}\n\nAnswer to grade:\n${question.answer}`,
        },
      ],
      tools: undefined,
      maxSteps: 1,
      signal: AbortSignal.timeout(JUDGE_TIMEOUT_MILLIS),
      stream: false,
      emit: () => undefined,
    });
    const [verdict = '', ...reason] = result.text.trim().split('\n');
    const why = redact(reason.join(' ').trim() || verdict, secretValues);
    return /^\W*PASS\b/i.test(verdict)
      ? { passed: true }
      : { passed: false, diff: `the judge failed the answer ${JSON.stringify(question.answer)}: ${why}` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { passed: false, diff: `the judge could not be asked: ${redact(message, secretValues)}` };
  }
}
