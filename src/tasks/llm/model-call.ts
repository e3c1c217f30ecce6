import {
  generateText,
  stepCountIs,
  streamText,
  type FinishReason,
  type LanguageModelUsage,
  type ModelMessage,
  type OutputInterface,
  type ToolSet,
} from 'ai';
import type { ModelSpec } from '../../llm/providers.ts';
import { FailedMidStream, ProviderTimeoutError } from '../../llm/retry.ts';
import { linkedSignal } from '../../shared/abort.ts';
import type { TurnEvent } from '../../runtime/turn.ts';

/**
 * One attempt at a model call: `generateText`, or `streamText` with a `token` event per text delta when someone
 * listens to the turn. Tools run in a loop of at most `maxSteps` model calls. The provider timeout and the
 * turn's abort signal both cancel the HTTP request.
 */

export interface ModelCallRequest {
  readonly spec: ModelSpec;
  readonly system: string | undefined;
  readonly messages: ModelMessage[];
  readonly tools: ToolSet | undefined;
  /** Asks the provider for a JSON answer (structured-answer.ts). */
  readonly output?: OutputInterface<string, string, never> | undefined;
  readonly maxSteps: number;
  readonly signal: AbortSignal;
  readonly stream: boolean;
  /** With `stream`: how long the whole streamed answer may take (a backstop beside the provider's own timeout). */
  readonly streamingTimeoutMs?: number | undefined;
  readonly emit: (event: TurnEvent) => void;
}

export interface StepUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface ModelCallResult {
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly usage: StepUsage;
  /** Usage of every model call made (one per step of the tool loop). */
  readonly steps: readonly StepUsage[];
  readonly modelId: string | undefined;
  /** The messages the calls added (assistant messages, tool results): a resumed tool loop goes on after them. */
  readonly responseMessages: ModelMessage[];
  /** Tool calls of the last step left without a result: they wait for a person's approval. */
  readonly unansweredToolCalls: ReadonlyArray<{ toolCallId: string; toolName: string; input: unknown }>;
}

type ToolCallPart = { toolCallId: string; toolName: string; input: unknown };

function unanswered(calls: readonly ToolCallPart[], results: ReadonlyArray<{ toolCallId: string }>): ToolCallPart[] {
  const answered = new Set(results.map((result) => result.toolCallId));
  return calls
    .filter((call) => !answered.has(call.toolCallId))
    .map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input }));
}

function usageOf(usage: LanguageModelUsage | undefined): StepUsage {
  return { inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 };
}

/** The shorter of two optional limits. */
function timeLimit(first: number | undefined, second: number | undefined): number | undefined {
  if (first === undefined) return second;
  return second === undefined ? first : Math.min(first, second);
}

export async function callModel(request: ModelCallRequest): Promise<ModelCallResult> {
  const { spec } = request;
  const limitMs = timeLimit(spec.timeoutMs, request.stream ? request.streamingTimeoutMs : undefined);
  // Without a time limit the turn's signal alone cancels the request (no timer, no signal of its own).
  const call = linkedSignal([request.signal], limitMs, () => new ProviderTimeoutError(limitMs!));
  const options = {
    model: spec.model,
    ...(request.system === undefined ? {} : { instructions: request.system }),
    messages: request.messages,
    ...spec.settings,
    ...(request.tools === undefined ? {} : { tools: request.tools, stopWhen: stepCountIs(request.maxSteps) }),
    ...(request.output === undefined ? {} : { output: request.output }),
    maxRetries: 0,
    // The service traces model calls itself (llm-task.ts); the AI SDK's telemetry would copy every event.
    telemetry: { isEnabled: false },
    abortSignal: call.signal,
  };
  /** Whether part of the answer already reached the client (then a failure is not retried). */
  let streamed = false;
  try {
    if (!request.stream) {
      const result = await generateText(options);
      return {
        text: result.text,
        finishReason: result.finishReason,
        usage: usageOf(result.totalUsage),
        steps: result.steps.map((step) => usageOf(step.usage)),
        modelId: result.response?.modelId,
        responseMessages: result.response.messages,
        unansweredToolCalls: unanswered(result.toolCalls, result.toolResults),
      };
    }
    let failure: unknown;
    const result = streamText({
      ...options,
      onError: ({ error }) => {
        failure ??= error;
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta' && part.text !== '') {
        request.emit({ type: 'token', text: part.text });
        streamed = true;
      } else if (part.type === 'error') failure ??= part.error;
    }
    if (failure !== undefined) throw failure;
    const [text, finishReason, totalUsage, steps, response, toolCalls, toolResults] = await Promise.all([
      result.text,
      result.finishReason,
      result.totalUsage,
      result.steps,
      result.response,
      result.toolCalls,
      result.toolResults,
    ]);
    return {
      text,
      finishReason,
      usage: usageOf(totalUsage),
      steps: steps.map((step) => usageOf(step.usage)),
      modelId: response?.modelId,
      responseMessages: response.messages,
      unansweredToolCalls: unanswered(toolCalls, toolResults),
    };
  } catch (error) {
    const failure = call.signal.aborted && !request.signal.aborted ? call.signal.reason : error;
    throw streamed && !(failure instanceof FailedMidStream) ? new FailedMidStream(failure) : failure;
  } finally {
    call.release();
  }
}
