import type { ModelMessage, OutputInterface, ToolResultPart } from 'ai';
import { A2aPeers, peerTools } from '../../llm/a2a-tools.ts';
import { buildMessages } from '../../llm/conversation-messages.ts';
import type { HttpCallTools } from '../../llm/http-call-tools.ts';
import { CREDENTIAL_PARAMETERS, flag, integer, ParameterError, text, type Parameters } from '../../llm/parameters.ts';
import {
  ModelRegistry,
  ProviderConfigurationError,
  type ModelSpec,
  type ProviderDefaults,
} from '../../llm/providers.ts';
import { providerCallError, ProviderTimeoutError, withRetry, type RetryPolicy } from '../../llm/retry.ts';
import { LlmMeters } from '../../ops/domain-metrics.ts';
import type { Tracing } from '../../ops/tracing.ts';
import type { ToolDefinition } from '../../llm/tool-definitions.ts';
import type { ToolHistory } from '../../llm/tool-history.ts';
import {
  answerProblem,
  jsonAnswerOutput,
  jsonModeOf,
  repairMessages,
  unfencedJson,
} from '../../llm/structured-answer.ts';
import { runToolCall, toolSetOf, type ToolCallScope, type TraceEntry } from '../../llm/tool-runner.ts';
import type { ToolResumption } from '../../runtime/human-approval.ts';
import { unguardedWebAccess, type WebAccess } from '../../llm/web-page.ts';
import type { SecretResolver } from '../../security/secret-references.ts';
import { runPropertyInstructions, type InstructionRun } from '../../properties/run-instructions.ts';
import type { SecretWriter } from '../../properties/secret-properties.ts';
import { TemplateData } from '../../templating/data-model.ts';
import { TemplateError } from '../../templating/engine.ts';
import { Type } from '@sinclair/typebox';
import { closed } from '../../resources/schemas/common.ts';
import { defineTask, DeploymentError, stepUri, uriReferences } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { isRecord } from '../../shared/json.ts';
import {
  compileLlmTask,
  type CompiledLlmTask,
  type CompiledParameter,
  type LlmTaskConfig,
  type TaskTool,
} from './llm-config.ts';
import { CascadeFailedError, cascadeOutput, runCascade, type CascadeAttempt } from './model-cascade.ts';
import type { McpServices } from '../mcpcalls/mcpcalls-task.ts';
import { mcpToolDefinitions } from './mcp-tools.ts';
import { retrieveContext } from './knowledge-retrieval.ts';
import { callModel, type ModelCallResult } from './model-call.ts';
import { resolveSecrets, SecretValues } from '../httpcalls/field-template.ts';
import type { UserMemoryService } from '../../user-memory/service.ts';
import { memoryTools } from '../../user-memory/memory-tools.ts';

/**
 * `svc://ai.svc.llm` (alias `ai.svc.langchain`): calls a language model when one of a task's actions is among the
 * step's actions (`*` = every step), reference §9. Messages: the templated `systemMessage`, the conversation
 * history (unless `sendConversation` is "false") and the current input or the templated `prompt`. `${vault:…}`
 * references are resolved per call and never stored. Writes `langchain:<type>:<taskId>`, with `addToOutput` the
 * public `output:text:langchain:<type>` and an output item, response metadata under
 * `langchain:<responseMetadataObjectName>`, and in agent mode the tool trace `langchain:trace:<type>:<taskId>`.
 */

export const LLM_TASK_TYPE = 'ai.svc.llm';
const DEFAULT_MAX_STEPS = 10;
const NO_RETRY: RetryPolicy = { maxAttempts: 1, backoffDelayMs: 0, backoffMultiplier: 1, maxBackoffDelayMs: 0 };

export interface LlmTaskOptions {
  readonly secrets: SecretResolver;
  readonly tools: ToolHistory;
  /** `svc.ollama.default-base-url` and the like. */
  readonly providerDefaults?: ProviderDefaults;
  /** The MCP client: the tools of the workflow's MCP-call sets; without it they are not offered. */
  readonly mcp?: McpServices | undefined;
  /** HTTP calls as tools; without it, an LLM task listing `tools` does not deploy. */
  readonly httpCallTools?: HttpCallTools;
  /** How the web-page tools reach the web (default: http and https URLs only, unguarded). */
  readonly web?: WebAccess;
  /** The LLM meters (calls, tokens, cost, cascade attempts); default: registered nowhere. */
  readonly meters?: LlmMeters;
  /** A span per model request when traces are on. */
  readonly tracing?: Tracing | undefined;
  /** Persistent user memory: the memory tools of agents with `enableMemoryTools`; without it they do not deploy. */
  readonly userMemory?: UserMemoryService | undefined;
  /** Where a failing pre-request or post-response property instruction is reported (it is skipped). */
  readonly log?: { warn(details: Record<string, unknown>, message: string): void } | undefined;
}

/** What LLM steps need from the running service: the options, a provider registry and web access. */
export interface LlmServices extends LlmTaskOptions {
  readonly models: ModelRegistry;
  readonly web: WebAccess;
  readonly meters: LlmMeters;
  readonly a2aPeers: A2aPeers;
}

export function createLlmServices(options: LlmTaskOptions): LlmServices {
  return {
    ...options,
    models: new ModelRegistry(options.providerDefaults ?? { ollamaBaseUrl: 'http://localhost:11434' }),
    web: options.web ?? unguardedWebAccess,
    a2aPeers: new A2aPeers(options.providerDefaults?.fetch ?? globalThis.fetch),
    meters: options.meters ?? new LlmMeters([]),
  };
}

const uri = Type.Optional(
  Type.String({
    description: 'Reference of the LLM configuration: svc://ai.svc.llm/langchainstore/langchains/<id>?version=<n>.',
  }),
);
const UriOnly = closed({ uri }, { description: 'The LLM configuration.' });

export const llmTask = defineTask({
  type: LLM_TASK_TYPE,
  aliases: ['ai.svc.langchain'],
  configSchema: UriOnly,
  extensionsSchema: UriOnly,
  references: uriReferences('llm'),
  async compile(config, extensions, context) {
    const services = context.services.llm;
    if (!services) throw new DeploymentError('LLM tasks are not available in this service.');
    const reference = stepUri(config, extensions);
    const configuration =
      reference === undefined ? {} : ((await context.resolve(reference, 'llm')) as { tasks?: LlmTaskConfig[] });
    const tasks: CompiledLlmTask[] = [];
    for (const [index, task] of (configuration.tasks ?? []).entries())
      tasks.push(await compileLlmTask(task, index, context, services.httpCallTools, services.userMemory !== undefined));
    return {
      type: LLM_TASK_TYPE,
      async execute(turn) {
        // A turn resumed after tool approvals goes on at the task that asked for them.
        const resumedTask = toolLoopOf(turn)?.taskId;
        let skipping = resumedTask !== undefined && tasks.some((task) => task.id === resumedTask);
        for (const task of tasks) {
          if (skipping) {
            if (task.id !== resumedTask) continue;
            skipping = false;
          } else if (!(task.anyAction || turn.actions.some((action) => task.actions.has(action)))) continue;
          await runTask(task, turn, services, context.services.secretWriter);
          if (turn.toolApprovalRequest) return;
        }
      },
    };
  },
});

/**
 * Renders templated parameters, then resolves the vault references the configuration wrote (never one that came
 * in with the rendered data); reports the secret values that went in, credential parameters included.
 */
async function resolveParameters(
  task: CompiledLlmTask,
  data: TemplateData,
  resolver: SecretResolver,
): Promise<{ parameters: Parameters; secrets: SecretValues }> {
  const secrets = new SecretValues();
  const parameters = await resolveParameterList(task.id, task.parameters, data, resolver, secrets);
  return { parameters, secrets };
}

/** Renders and resolves one list of parameters, adding the secret values that went in to `secrets`. */
async function resolveParameterList(
  taskId: string,
  list: readonly CompiledParameter[],
  data: TemplateData,
  resolver: SecretResolver,
  secrets: SecretValues,
): Promise<Parameters> {
  const parameters: Record<string, string> = {};
  for (const parameter of list) {
    if (parameter.isLiteral) {
      parameters[parameter.name] = parameter.literal;
      continue;
    }
    let rendered: string;
    try {
      rendered = parameter.field.render(data.get());
    } catch (error) {
      if (error instanceof TemplateError)
        throw new Error(
          `LLM task '${taskId}': the parameter '${parameter.name}' could not be rendered: ${error.message}`,
        );
      throw error;
    }
    if (!parameter.field.hasSecrets) {
      parameters[parameter.name] = rendered;
      continue;
    }
    const resolved = await resolveSecrets(rendered, parameter.secretNames, resolver, secrets).catch(
      (error: unknown) => {
        throw new Error(
          `LLM task '${taskId}': the parameter '${parameter.name}' refers to a secret that cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        );
      },
    );
    parameters[parameter.name] = resolved.text;
  }
  for (const name of CREDENTIAL_PARAMETERS) {
    const value = parameters[name];
    if (value !== undefined && value.trim() !== '') {
      secrets.add(value.trim());
      secrets.add(value);
    }
  }
  return parameters;
}

/** The model of a provider type and resolved parameters; a configuration problem becomes a turn error. */
async function modelSpec(
  task: CompiledLlmTask,
  deps: LlmServices,
  type: string,
  parameters: Parameters,
  hide: (text: string) => string,
): Promise<ModelSpec> {
  try {
    return await deps.models.spec(type, parameters);
  } catch (error) {
    if (error instanceof ProviderConfigurationError || error instanceof ParameterError)
      throw new Error(hide(`LLM task '${task.id}': ${error.message}`));
    throw error;
  }
}

function toolDefinitions(
  task: CompiledLlmTask,
  turn: Turn,
  httpCallTools: HttpCallTools | undefined,
): ToolDefinition[] {
  return task.tools.map(({ definition, httpCall }: TaskTool) => {
    if (!httpCall || !httpCallTools) return definition;
    return {
      ...definition,
      async run(args) {
        const stringArgs = Object.fromEntries(
          Object.entries(args).map(([name, value]) => [
            name,
            typeof value === 'string' ? value : JSON.stringify(value),
          ]),
        );
        const result = await httpCallTools.run(httpCall.reference, httpCall.name, stringArgs, turn);
        return typeof result === 'string' ? result : JSON.stringify(result);
      },
    };
  });
}

/**
 * The answer as the post-response instructions see it: a JSON object or list (also inside a Markdown code fence)
 * parsed, so that its fields can become properties, unless the parameter `convertToObject` is "false"; otherwise
 * the text.
 */
export function responseObject(text: string, parameters: Parameters): unknown {
  if (!flag(parameters, 'convertToObject', true)) return text;
  const json = unfencedJson(text);
  if (!(json.startsWith('{') && json.endsWith('}')) && !(json.startsWith('[') && json.endsWith(']'))) return text;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return text;
  }
}

/** How the task's pre-request and post-response instructions run: a failing one is logged and skipped (reference §7.5). */
function instructionRun(
  task: CompiledLlmTask,
  turn: Turn,
  data: TemplateData,
  deps: LlmServices,
  secretWriter: SecretWriter | undefined,
): InstructionRun {
  return {
    turn,
    data,
    secretWriter,
    skipFailed: (error, index) => {
      const problem = error instanceof Error ? error.message : String(error);
      deps.log?.warn(
        { llmTask: task.id, instruction: index, problem },
        'an LLM-task property instruction failed and was skipped',
      );
    },
  };
}

async function runTask(
  task: CompiledLlmTask,
  turn: Turn,
  deps: LlmServices,
  secretWriter: SecretWriter | undefined,
): Promise<void> {
  const data = new TemplateData(turn);
  await runPropertyInstructions(task.preRequest, instructionRun(task, turn, data, deps, secretWriter));
  const { parameters, secrets } = await resolveParameters(task, data, deps.secrets);
  const hide = (value: string) => secrets.mask(value);
  let spec: ModelSpec;
  let maxSteps: number;
  let jsonMode: boolean;
  try {
    spec = await deps.models.spec(task.type, parameters);
    jsonMode = jsonModeOf(parameters);
    maxSteps = Math.max(
      1,
      task.maxToolIterations ?? integer(parameters, 'maxToolIterations', 'maxSteps') ?? DEFAULT_MAX_STEPS,
    );
  } catch (error) {
    if (error instanceof ProviderConfigurationError || error instanceof ParameterError)
      throw new Error(hide(`LLM task '${task.id}': ${error.message}`));
    throw error;
  }

  const historyLimit = integer(parameters, 'logSizeLimit') ?? task.historyLimit;
  const loop = toolLoopOf(turn);
  const resumed = loop?.taskId === task.id ? loop : undefined;
  // A turn resumed after a tool approval goes on with the context retrieved before it waited (its sources are in
  // the step already): retrieving again would embed the query twice and could change the system message.
  const retrieved = resumed
    ? resumed.retrieved
    : task.retrieval && (await retrieveContext(task.retrieval, task.id, turn, turn.input));
  const system = [text(parameters, 'systemMessage'), retrieved].filter(Boolean).join('\n\n') || undefined;
  const summaryKey = `langchain:summary:${task.type}:${task.id}`;
  const { messages, summary } = buildMessages(turn.previousSteps, turn.input, {
    historyLimit,
    maxContextTokens: task.maxContextTokens,
    anchorFirstSteps: task.anchorFirstSteps,
    system,
    summaryKey: task.summarizeHistory ? summaryKey : undefined,
    sendConversation: flag(parameters, 'sendConversation', true),
    includeFirstAgentMessage: flag(parameters, 'includeFirstAgentMessage', true),
    prompt: text(parameters, 'prompt'),
  });
  if (summary !== undefined) turn.set(summaryKey, summary);
  // Nothing from the user yet (e.g. a task on CONVERSATION_START without `prompt`): the system message is the
  // request; with no system message either there is nothing to ask.
  let instructions = withSummary(system, summary?.text);
  if (messages.length === 0) {
    if (instructions === undefined) return;
    messages.push({ role: 'user', content: instructions });
    instructions = undefined;
  }
  const trace: TraceEntry[] = [];
  const definitions = [
    ...toolDefinitions(task, turn, deps.httpCallTools),
    ...(task.memory && deps.userMemory
      ? memoryTools(
          deps.userMemory,
          { userId: turn.userId, agentId: turn.agentId, groupId: turn.groupId, conversationId: turn.conversationId },
          task.memory,
        )
      : []),
    ...(await remoteTools(task, deps, data, secrets, turn.signal).catch((error: unknown) => {
      if (turn.signal.aborted) throw turn.signal.reason;
      throw new Error(hide(`LLM task '${task.id}': ${error instanceof Error ? error.message : String(error)}`));
    })),
  ];
  const scope: ToolCallScope = {
    conversationId: turn.conversationId,
    signal: turn.signal,
    web: deps.web,
    emit: turn.emit,
    trace,
    redact: hide,
  };
  const tools =
    task.agentMode && definitions.length > 0
      ? toolSetOf(definitions, deps.tools, scope, task.toolApprovals)
      : undefined;
  if (resumed) {
    // Resumed after a person decided on the tool calls: the loop goes on from where it stopped.
    turn.resumption = undefined;
    trace.push(...resumed.trace);
    messages.splice(0, messages.length, ...(await decidedToolCalls(resumed, definitions, deps, scope)));
    instructions = resumed.systemAsMessage ? undefined : system;
  }

  const format = task.answerFormat.schema !== undefined || jsonMode ? task.answerFormat : undefined;
  const call = async (
    model: ModelSpec,
    sent: ModelMessage[],
    output: OutputInterface<string, string, never> | undefined,
    retry: RetryPolicy,
    stream: boolean,
  ): Promise<ModelCallResult> => {
    const attempt = async (): Promise<ModelCallResult> => {
      try {
        const made = await callModel({
          spec: model,
          system: instructions,
          messages: sent,
          tools,
          output,
          maxSteps,
          signal: turn.signal,
          stream,
          streamingTimeoutMs: task.streamingTimeoutMs,
          emit: turn.emit,
        });
        deps.meters.callFinished(model.provider, model.modelName, 'ok', Math.max(1, made.steps.length));
        return made;
      } catch (error) {
        const timedOut = error instanceof ProviderTimeoutError || turn.signal.aborted;
        deps.meters.callFinished(model.provider, model.modelName, timedOut ? 'timeout' : 'error');
        throw error;
      }
    };
    const tracing = deps.tracing;
    const { value } = await withRetry(
      retry,
      turn.signal,
      tracing === undefined ? attempt : () => tracedModelCall(tracing, model, attempt),
    );
    return value;
  };
  const modelFailure = (error: unknown, model: ModelSpec): Error => {
    if (turn.signal.aborted) throw turn.signal.reason;
    return providerCallError(error, { provider: model.provider, modelName: model.modelName, secrets: secrets.values });
  };
  const costOf = (model: ModelSpec, made: ModelCallResult) => {
    turn.emit({ type: 'usage', inputTokens: made.usage.inputTokens, outputTokens: made.usage.outputTokens });
    let cost = 0;
    for (const step of made.steps) {
      const stepCost = deps.tools.recordModelCall(
        turn.conversationId,
        model.provider,
        model.modelName,
        step.inputTokens,
        step.outputTokens,
      );
      deps.meters.used(model.provider, model.modelName, step.inputTokens, step.outputTokens, stepCost);
      cost += stepCost;
    }
    return cost;
  };
  const ask = async (sent: ModelMessage[]): Promise<ModelCallResult> => {
    try {
      return await call(spec, sent, format && jsonAnswerOutput(format), task.retry, turn.hasListener);
    } catch (error) {
      throw modelFailure(error, spec);
    }
  };

  let result: ModelCallResult;
  let answerText: string;
  let cost: number;
  let repairs = 0;
  let chosenStep: number | undefined;
  // A recorded answer (a transcript replay) stands for the whole exchange: cascade, repair and all.
  const recorded = turn.replay?.llmAnswer(task.id);
  const cascade = recorded === undefined ? task.cascade : undefined;
  if (recorded !== undefined) {
    result = recordedAnswer(recorded);
    cost = 0;
    answerText = recorded;
  } else if (cascade) {
    const output = cascadeOutput(cascade.judge);
    // The attempts so far, for the live events (the run's record has them too, once it ends).
    const attempts: CascadeAttempt[] = [];
    const run = await runCascade(
      cascade.judge,
      cascade.steps.map((step) => step.confidenceThreshold),
      {
        steps: cascade.steps.length,
        spec: async (index) => {
          const step = cascade.steps[index]!;
          const stepParameters = await resolveParameterList(task.id, step.parameters, data, deps.secrets, secrets);
          const model = await modelSpec(task, deps, step.type, stepParameters, hide);
          return step.timeoutMs === undefined ? model : { ...model, timeoutMs: step.timeoutMs };
        },
        // Only the last step is retried: for the others, the next step is the fallback. Not streamed, since an
        // answer may still be rejected.
        call: (model, index) => {
          const previous = attempts.at(-1);
          if (previous !== undefined && previous.outcome !== 'accepted')
            turn.emit({
              type: 'cascade_escalation',
              task: task.id,
              fromStep: previous.step,
              toStep: index,
              outcome: previous.outcome,
              reason: previous.reason,
            });
          turn.emit({
            type: 'cascade_step_start',
            task: task.id,
            step: index,
            provider: model.provider,
            modelName: model.modelName,
          });
          return call(model, messages, output, index === cascade.steps.length - 1 ? task.retry : NO_RETRY, false);
        },
        cost: costOf,
        failure: (error, model) => modelFailure(error, model).message,
        now: () => performance.now(),
        counted: (attempt) => {
          attempts.push(attempt);
          deps.meters.cascadeAttempts.inc({ model: attempt.modelName, outcome: attempt.outcome });
        },
      },
    ).catch((error: unknown) => {
      if (error instanceof CascadeFailedError) throw new Error(hide(`LLM task '${task.id}': ${error.message}`));
      throw error;
    });
    turn.set(`langchain:cascade:${task.type}:${task.id}`, {
      chosenStep: run.chosenStep,
      cost: run.cost,
      attempts: run.attempts,
    });
    ({ result, spec, cost, chosenStep } = run);
    answerText = run.text;
  } else {
    result = await ask(messages);
    cost = costOf(spec, result);
    if (result.unansweredToolCalls.length > 0) {
      const state: ToolLoopState = {
        taskId: task.id,
        // Stored with the waiting conversation: secret values the task resolved are masked.
        messages: JSON.parse(hide(JSON.stringify([...messages, ...result.responseMessages]))) as ModelMessage[],
        systemAsMessage: instructions === undefined && system !== undefined,
        ...(retrieved ? { retrieved: hide(retrieved) } : {}),
        trace,
      };
      turn.toolApprovalRequest = {
        toolCalls: result.unansweredToolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          tool: call.toolName,
          arguments: isRecord(call.input) ? call.input : {},
        })),
        state,
      };
      return;
    }
    const problem = format === undefined ? undefined : answerProblem(result.text, format);
    if (format !== undefined && problem !== undefined) {
      repairs = 1;
      result = await ask(repairMessages(messages, result.text, problem));
      cost += costOf(spec, result);
      const remaining = answerProblem(result.text, format);
      if (remaining !== undefined)
        throw new Error(hide(`LLM task '${task.id}': ${remaining}, also after one repair request.`));
    }
    answerText = result.text;
  }
  const answer = hide(answerText);
  writeResults(task, turn, {
    text: answer,
    addToOutput: flag(parameters, 'addToOutput', task.agentMode),
    metadata: {
      provider: spec.provider,
      modelName: spec.modelName,
      ...(result.modelId === undefined ? {} : { modelId: result.modelId }),
      finishReason: result.finishReason,
      tokenUsage: {
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
        totalTokens: result.usage.inputTokens + result.usage.outputTokens,
      },
      modelCalls: result.steps.length,
      ...(chosenStep === undefined ? {} : { cascadeStep: chosenStep }),
      ...(format === undefined ? {} : { repairAttempts: repairs }),
      cost,
    },
    trace,
  });
  if (task.postResponse.length > 0) {
    data.put(task.responseObjectName, responseObject(answer, parameters));
    await runPropertyInstructions(task.postResponse, instructionRun(task, turn, data, deps, secretWriter));
  }
}

/** The tools of the task's peer agents (A2A) and of its workflow's MCP servers, read this turn. */
async function remoteTools(
  task: CompiledLlmTask,
  deps: LlmServices,
  data: TemplateData,
  secrets: SecretValues,
  signal: AbortSignal,
): Promise<ToolDefinition[]> {
  const peers = await peerTools(deps.a2aPeers, task.a2aAgents, deps.secrets, secrets, signal);
  if (task.mcpSets.length === 0 || !deps.mcp) return peers;
  return [...peers, ...(await mcpToolDefinitions(task.mcpSets, deps.mcp, data.get(), secrets, signal))];
}

/** The system message with the rolling summary of the earlier conversation appended. */
function withSummary(system: string | undefined, summary: string | undefined): string | undefined {
  if (summary === undefined || summary === '') return system;
  const note = `Summary of the earlier conversation: ${summary}`;
  return system === undefined ? note : `${system}\n\n${note}`;
}

/** One model request in a span `chat <model>` with the OpenTelemetry GenAI attributes (model, tokens). */
function tracedModelCall(
  tracing: Tracing,
  model: ModelSpec,
  attempt: () => Promise<ModelCallResult>,
): Promise<ModelCallResult> {
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': model.provider,
    'gen_ai.request.model': model.modelName,
  };
  return tracing.inSpan(`chat ${model.modelName}`, attributes, async (span) => {
    const made = await attempt();
    span.setAttributes({
      'gen_ai.usage.input_tokens': made.usage.inputTokens,
      'gen_ai.usage.output_tokens': made.usage.outputTokens,
      ...(made.modelId === undefined ? {} : { 'gen_ai.response.model': made.modelId }),
    });
    return made;
  });
}

/** A recorded answer as the result of a model call that cost nothing. */
function recordedAnswer(text: string): ModelCallResult {
  return {
    text,
    finishReason: 'stop',
    usage: { inputTokens: 0, outputTokens: 0 },
    steps: [],
    modelId: undefined,
    responseMessages: [],
    unansweredToolCalls: [],
  };
}

/** What an LLM task that waits for tool approvals needs to go on (stored with the waiting conversation). */
interface ToolLoopState {
  readonly taskId: string;
  /** The messages so far, ending with the assistant's tool calls. */
  readonly messages: ModelMessage[];
  /** The system message went as the first user message (nothing else to ask). */
  readonly systemAsMessage: boolean;
  /** The context retrieved for the system message (knowledge bases, httpCallRag), if any. */
  readonly retrieved?: string | undefined;
  readonly trace: readonly TraceEntry[];
}

/** The tool loop a resumed turn goes on with, and the person's decisions on its calls. */
function toolLoopOf(turn: Turn): (ToolLoopState & Pick<ToolResumption, 'decisions'>) | undefined {
  const resumption = turn.resumption as ToolResumption | undefined;
  return resumption === undefined
    ? undefined
    : { ...(resumption.state as ToolLoopState), decisions: resumption.decisions };
}

/**
 * The loop's messages with the person's decisions applied: edited arguments replace the model's in its tool calls;
 * approved calls run (through the tool infrastructure, as any call), rejected ones tell the model why.
 */
async function decidedToolCalls(
  loop: ToolLoopState & Pick<ToolResumption, 'decisions'>,
  definitions: readonly ToolDefinition[],
  deps: LlmServices,
  scope: ToolCallScope,
): Promise<ModelMessage[]> {
  const decided = new Map(loop.decisions.map((decision) => [decision.toolCallId, decision]));
  const messages = loop.messages.map((message): ModelMessage => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return message;
    return {
      ...message,
      content: message.content.map((part) => {
        const decision = part.type === 'tool-call' ? decided.get(part.toolCallId) : undefined;
        return decision && part.type === 'tool-call' ? { ...part, input: decision.arguments } : part;
      }),
    };
  });
  const results: ToolResultPart[] = [];
  for (const call of messages.flatMap((message) =>
    message.role === 'assistant' && typeof message.content !== 'string' ? message.content : [],
  )) {
    if (call.type !== 'tool-call') continue;
    const decision = decided.get(call.toolCallId);
    if (!decision) continue;
    const definition = definitions.find((candidate) => candidate.name === call.toolName);
    const value = !decision.approved
      ? `A person rejected this call${decision.reason ? `: ${decision.reason}` : '.'}`
      : definition
        ? await runToolCall(definition, decision.arguments, deps.tools, scope)
        : `Error: the tool '${call.toolName}' is not available any more.`;
    results.push({
      type: 'tool-result',
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output: { type: 'text', value },
    });
  }
  return [...messages, { role: 'tool', content: results }];
}

function writeResults(
  task: CompiledLlmTask,
  turn: Turn,
  result: { text: string; addToOutput: boolean; metadata: Record<string, unknown>; trace: TraceEntry[] },
): void {
  turn.set(`langchain:${task.type}:${task.id}`, result.text);
  if (result.addToOutput && result.text.trim() !== '') {
    turn.set(`output:text:langchain:${task.type}`, result.text, true);
    turn.appendOutput('output', { type: 'text', text: result.text, delay: 0 });
  }
  if (task.responseMetadataObjectName) {
    turn.set(`langchain:${task.responseMetadataObjectName}`, result.metadata);
    const existing = turn.output.langchain;
    const map = isRecord(existing) ? existing : {};
    turn.setOutput('langchain', { ...map, [task.responseMetadataObjectName]: result.metadata });
  }
  if (task.agentMode) turn.set(`langchain:trace:${task.type}:${task.id}`, result.trace);
}
