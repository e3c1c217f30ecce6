import type { A2aAgentConfig } from '../../llm/a2a-tools.ts';
import { builtInTools } from '../../llm/built-in-tools.ts';
import type { CompiledMcpSet } from '../mcpcalls/mcp-set.ts';
import { workflowMcpSets } from './mcp-tools.ts';
import { compilePropertyInstructions, type CompiledPropertyInstruction } from '../../properties/instructions.ts';
import type { HttpCallTools } from '../../llm/http-call-tools.ts';
import { ParameterError, text, type Parameters } from '../../llm/parameters.ts';
import { callSettingsOf, checkProvider, ProviderConfigurationError } from '../../llm/providers.ts';
import {
  compileAnswerFormat,
  jsonModeOf,
  ResponseSchemaError,
  type AnswerFormat,
} from '../../llm/structured-answer.ts';
import {
  compileJudge,
  DEFAULT_CONFIDENCE_THRESHOLD,
  type CascadeJudge,
  type ModelCascadeConfig,
} from './model-cascade.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../../llm/retry.ts';
import type { ToolDefinition } from '../../llm/tool-definitions.ts';
import type { UserMemorySettings } from '../../user-memory/config.ts';
import { MEMORY_TOOL_NAMES, MEMORY_TOOLS_NAME } from '../../user-memory/memory-tools.ts';
import { needsRendering, TemplateSyntaxError } from '../../templating/engine.ts';
import { DeploymentError, type CompileContext } from '../../runtime/tasks.ts';
import { compileFieldTemplate, type FieldTemplate } from '../httpcalls/field-template.ts';
import {
  compileRetrieval,
  knowledgeTool,
  type CompiledRetrieval,
  type RetrievalConfig,
} from './knowledge-retrieval.ts';

/**
 * Deploy-time compilation of an LLM configuration (reference §9.1): per task its trigger actions, provider check,
 * parameter templates, retry policy, history window and tools. Only what depends on the turn is left for run time
 * (template rendering, vault resolution, the model call).
 */

export interface LlmTaskConfig extends RetrievalConfig {
  readonly id?: string;
  readonly type: string;
  readonly actions?: readonly string[];
  readonly parameters?: Readonly<Record<string, string>>;
  readonly preRequest?: { readonly propertyInstructions?: readonly unknown[] };
  readonly postResponse?: { readonly propertyInstructions?: readonly unknown[] };
  readonly responseObjectName?: string;
  readonly responseMetadataObjectName?: string;
  readonly tools?: readonly string[];
  readonly enableBuiltInTools?: boolean;
  readonly builtInToolsWhitelist?: readonly string[];
  readonly enableHttpCallTools?: boolean;
  readonly toolApprovals?: readonly string[];
  readonly enableMcpCallTools?: boolean;
  readonly conversationHistoryLimit?: number;
  readonly maxContextTokens?: number;
  readonly anchorFirstSteps?: number;
  readonly summarizeHistory?: boolean;
  readonly streamingTimeoutSeconds?: number;
  readonly responseSchema?: Readonly<Record<string, unknown>>;
  readonly modelCascade?: ModelCascadeConfig;
  readonly a2aAgents?: readonly A2aAgentConfig[];
  readonly maxToolIterations?: number;
  readonly retry?: Partial<RetryPolicy>;
}

/**
 * One parameter: literal text, or a template rendered per turn. Its `${vault:…}` references (listed in
 * `secretNames`) are resolved after rendering, and only those the configuration wrote: one arriving through the
 * rendered data stays literal text (the HTTP calls' field templates).
 */
export interface CompiledParameter {
  readonly name: string;
  readonly literal: string;
  /** Known at deployment: no template, no vault reference. */
  readonly isLiteral: boolean;
  readonly field: FieldTemplate;
  readonly secretNames: readonly string[];
}

/** A tool of the task together with how to run it (built-in, or an HTTP call of a set). */
export interface TaskTool {
  readonly definition: ToolDefinition;
  readonly httpCall?: { readonly reference: string; readonly name: string };
}

export interface CompiledLlmTask {
  readonly id: string;
  readonly type: string;
  readonly anyAction: boolean;
  readonly actions: ReadonlySet<string>;
  readonly parameters: readonly CompiledParameter[];
  /** Run before the model is called: the properties they set reach the templated parameters (prompt, systemMessage). */
  readonly preRequest: readonly CompiledPropertyInstruction[];
  /** Run after the answer arrived, with the answer bound under `responseObjectName` in the task's template data. */
  readonly postResponse: readonly CompiledPropertyInstruction[];
  /** Default: the task id. */
  readonly responseObjectName: string;
  readonly responseMetadataObjectName: string | undefined;
  readonly historyLimit: number;
  /** Estimated-token budget of a request (-1 = unbounded), the first steps it always keeps, the rolling summary. */
  readonly maxContextTokens: number;
  readonly anchorFirstSteps: number;
  readonly summarizeHistory: boolean;
  /** How long a streamed answer may take in all (`streamingTimeoutSeconds`, default 120 s). */
  readonly streamingTimeoutMs: number;
  /** `responseSchema` compiled; JSON mode alone comes from the `responseFormat` parameter. */
  readonly answerFormat: AnswerFormat;
  /** `modelCascade` when present and enabled: its judge and its steps (parameters merged over the task's). */
  readonly cascade: CompiledCascade | undefined;
  /** Bound of the tool loop (model calls in one turn) when the task sets it; else the parameter or the default. */
  readonly maxToolIterations: number | undefined;
  readonly retry: RetryPolicy;
  /** Agent mode: built-in tools enabled, HTTP-call tools or A2A agents listed. */
  readonly agentMode: boolean;
  /** Peer agents whose skills are tools (read per turn, a2a-tools.ts). */
  readonly a2aAgents: readonly A2aAgentConfig[];
  /** The MCP-call sets of the workflow whose tools are offered (mcp-tools.ts). */
  readonly mcpSets: readonly CompiledMcpSet[];
  /** The agent's memory settings when the task offers the memory tools (made per turn, user-memory/memory-tools.ts). */
  readonly memory: UserMemorySettings | undefined;
  readonly tools: readonly TaskTool[];
  /** Names of the tools whose calls wait for a person's approval. */
  readonly toolApprovals: ReadonlySet<string>;
  /** Knowledge bases and the HTTP call the task retrieves context from, if any. */
  readonly retrieval: CompiledRetrieval | undefined;
}

export interface CompiledCascadeStep {
  readonly type: string;
  readonly parameters: readonly CompiledParameter[];
  readonly confidenceThreshold: number;
  readonly timeoutMs: number | undefined;
}

export interface CompiledCascade {
  readonly judge: CascadeJudge;
  readonly steps: readonly CompiledCascadeStep[];
}

export const DEFAULT_HISTORY_LIMIT = 10;
/** The original's backstop for a streamed answer. */
const DEFAULT_STREAMING_TIMEOUT_SECONDS = 120;
export const DEFAULT_ANCHOR_FIRST_STEPS = 2;

function compileParameters(parameters: Readonly<Record<string, string>>, where: string): CompiledParameter[] {
  return Object.entries(parameters).map(([name, value]) => {
    const secretNames: string[] = [];
    let field: FieldTemplate;
    try {
      field = compileFieldTemplate(value, secretNames);
    } catch (error) {
      if (error instanceof TemplateSyntaxError)
        throw new DeploymentError(`The parameter '${name}' of ${where} is not a valid template: ${error.message}`);
      throw error;
    }
    return { name, literal: value, isLiteral: !field.hasSecrets && !needsRendering(value), field, secretNames };
  });
}

/** Parameters whose value is known at deployment (no template, no vault reference). */
function literalParameters(parameters: readonly CompiledParameter[]): Parameters {
  const literal: Record<string, string> = {};
  for (const parameter of parameters) if (parameter.isLiteral) literal[parameter.name] = parameter.literal;
  return literal;
}

/** The provider exists here and the parameters it needs are given. */
function checkModel(
  type: string,
  parameters: readonly CompiledParameter[],
  raw: Readonly<Record<string, string>>,
): void {
  checkProvider(type, (name) => text(raw, name) !== undefined);
  callSettingsOf(type, literalParameters(parameters));
}

function deploymentErrorOf(error: unknown, where: string): unknown {
  if (
    error instanceof ProviderConfigurationError ||
    error instanceof ParameterError ||
    error instanceof ResponseSchemaError
  )
    return new DeploymentError(`${where}: ${error.message}`);
  return error;
}

function compileCascade(config: LlmTaskConfig, where: string): CompiledCascade | undefined {
  const cascade = config.modelCascade;
  if (cascade === undefined || cascade.enabled === false || cascade.steps.length === 0) return undefined;
  const steps = cascade.steps.map((step, index): CompiledCascadeStep => {
    const stepWhere = `${where}, modelCascade.steps[${index}]`;
    const raw = { ...config.parameters, ...step.parameters };
    const parameters = compileParameters(raw, stepWhere);
    try {
      checkModel(step.type, parameters, raw);
    } catch (error) {
      throw deploymentErrorOf(error, stepWhere);
    }
    return {
      type: step.type,
      parameters,
      confidenceThreshold: step.confidenceThreshold ?? DEFAULT_CONFIDENCE_THRESHOLD,
      timeoutMs: step.timeoutMs,
    };
  });
  try {
    return { judge: compileJudge(cascade), steps };
  } catch (error) {
    throw deploymentErrorOf(error, `${where}, modelCascade`);
  }
}

/**
 * The memory tools go to a task with built-in tools (whose whitelist, if any, names `usermemory`) of an agent with
 * `enableMemoryTools`, as in the original. A whitelist naming `usermemory` in an agent without them, or in a
 * service without user memory, does not deploy: the tools would silently be missing.
 */
function memoryToolsOf(
  config: LlmTaskConfig,
  where: string,
  context: CompileContext,
  available: boolean,
): UserMemorySettings | undefined {
  const whitelist = (config.builtInToolsWhitelist ?? []).map((name) => name.trim());
  const named = whitelist.includes(MEMORY_TOOLS_NAME);
  if (config.enableBuiltInTools !== true || !(named || whitelist.length === 0)) return undefined;
  const agent = context.agentMemory;
  if (!agent?.toolsEnabled) {
    if (named && agent !== undefined)
      throw new DeploymentError(
        `${where}: builtInToolsWhitelist names '${MEMORY_TOOLS_NAME}', but the agent does not set enableMemoryTools: true.`,
      );
    return undefined;
  }
  if (!available) throw new DeploymentError(`${where}: persistent user memory is not available in this service.`);
  return agent.settings;
}

export async function compileLlmTask(
  config: LlmTaskConfig,
  index: number,
  context: CompileContext,
  httpCallTools: HttpCallTools | undefined,
  memoryAvailable = false,
): Promise<CompiledLlmTask> {
  const id = config.id ?? config.type;
  const where = `LLM task '${id}' (tasks[${index}])`;
  const parameters = compileParameters(config.parameters ?? {}, where);
  const raw = config.parameters ?? {};
  let answerFormat: AnswerFormat;
  try {
    checkModel(config.type, parameters, raw);
    jsonModeOf(literalParameters(parameters));
    answerFormat = compileAnswerFormat(config.responseSchema);
  } catch (error) {
    throw deploymentErrorOf(error, where);
  }
  const cascade = compileCascade(config, where);
  const tools: TaskTool[] =
    config.enableBuiltInTools === true
      ? builtInTools(config.builtInToolsWhitelist).map((definition) => ({ definition }))
      : [];
  const references = config.enableHttpCallTools === false ? [] : (config.tools ?? []);
  if (references.length > 0) {
    if (!httpCallTools) {
      throw new DeploymentError(
        `${where} lists HTTP-call sets under 'tools', but HTTP calls as tools are not available in this service yet.`,
      );
    }
    for (const reference of references) {
      for (const spec of await httpCallTools.describe(reference, context)) {
        const names = Object.keys(spec.parameters);
        tools.push({
          httpCall: { reference, name: spec.name },
          definition: {
            name: spec.name,
            description: spec.description || `HTTP call ${spec.name}`,
            inputSchema: {
              type: 'object',
              properties: Object.fromEntries(
                names.map((name) => [name, { type: 'string', description: spec.parameters[name] ?? '' }]),
              ),
              required: names,
            },
            run: () => Promise.reject(new Error('HTTP-call tools run through the HTTP-call executor.')),
          },
        });
      }
    }
  }

  const mcpSets = config.enableMcpCallTools === false ? [] : await workflowMcpSets(context);
  const memory = memoryToolsOf(config, where, context, memoryAvailable);
  const agentMode =
    config.enableBuiltInTools === true ||
    references.length > 0 ||
    (config.a2aAgents ?? []).length > 0 ||
    mcpSets.length > 0;
  const retrieval = await compileRetrieval(config, where, context, httpCallTools);
  const searchTool = agentMode ? knowledgeTool(retrieval) : undefined;
  if (searchTool) tools.push({ definition: searchTool });

  const toolNames = [...tools.map((tool) => tool.definition.name), ...(memory ? MEMORY_TOOL_NAMES : [])];
  const approvals = config.toolApprovals ?? [];
  for (const name of approvals)
    if (name !== '*' && !toolNames.includes(name))
      throw new DeploymentError(
        `${where}: toolApprovals names '${name}', which is not one of its tools (${toolNames.join(', ') || 'none'}).`,
      );

  const retry = { ...DEFAULT_RETRY, ...config.retry };
  return {
    id,
    type: config.type,
    anyAction: (config.actions ?? []).includes('*'),
    actions: new Set(config.actions ?? []),
    parameters,
    preRequest: compilePropertyInstructions(
      config.preRequest?.propertyInstructions,
      `${where}, preRequest.propertyInstructions`,
    ),
    postResponse: compilePropertyInstructions(
      config.postResponse?.propertyInstructions,
      `${where}, postResponse.propertyInstructions`,
    ),
    responseObjectName: config.responseObjectName?.trim() || id,
    responseMetadataObjectName: config.responseMetadataObjectName,
    historyLimit: config.conversationHistoryLimit ?? DEFAULT_HISTORY_LIMIT,
    maxContextTokens: config.maxContextTokens ?? -1,
    anchorFirstSteps: config.anchorFirstSteps ?? DEFAULT_ANCHOR_FIRST_STEPS,
    summarizeHistory: config.summarizeHistory ?? false,
    streamingTimeoutMs: (config.streamingTimeoutSeconds ?? DEFAULT_STREAMING_TIMEOUT_SECONDS) * 1000,
    answerFormat,
    cascade,
    maxToolIterations: config.maxToolIterations,
    retry,
    agentMode,
    a2aAgents: config.a2aAgents ?? [],
    mcpSets,
    memory,
    tools,
    toolApprovals: new Set(approvals.includes('*') ? toolNames : approvals),
    retrieval,
  };
}
