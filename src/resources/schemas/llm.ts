import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  arrayField,
  canonicalReference,
  checkPropertyInstructions,
  closed,
  fieldPath,
  indexPath,
  isBlank,
  PropertyInstructionList,
  stringMap,
  StringList,
  freeObject,
  stringEnum,
} from './common.ts';
import { BUILT_IN_TOOL_NAMES, builtInToolName, UNAVAILABLE_BUILT_IN_TOOLS } from '../../llm/built-in-tools.ts';
import { MEMORY_TOOLS_NAME } from '../../user-memory/memory-tools.ts';
import { ParameterError } from '../../llm/parameters.ts';
import { compileAnswerFormat, jsonModeOf, ResponseSchemaError } from '../../llm/structured-answer.ts';
import { cascadeProblems, EVALUATION_STRATEGIES } from '../../tasks/llm/model-cascade.ts';
import { isRecord } from '../../shared/json.ts';

export const LlmRetrySchema = closed(
  {
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, description: 'Attempts at most (default 3).' })),
    backoffDelayMs: Type.Optional(
      Type.Integer({ minimum: 0, description: 'First delay between attempts (default 1000).' }),
    ),
    backoffMultiplier: Type.Optional(
      Type.Number({ minimum: 1, description: 'Factor applied to the delay per attempt (default 2.0).' }),
    ),
    maxBackoffDelayMs: Type.Optional(Type.Integer({ minimum: 0, description: 'Largest delay (default 10000).' })),
  },
  { description: 'Retries on transient provider errors (timeouts, 429, 5xx).' },
);

const CascadeStepSchema = closed(
  {
    type: Type.String({ description: 'Provider of this step (as the task type).' }),
    parameters: Type.Optional(
      stringMap("This step's parameters, over the task's (modelName, apiKey, baseUrl, temperature, ...)."),
    ),
    confidenceThreshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'structured_output: a lower confidence escalates to the next step (default 0.7).',
      }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Provider timeout of this step.' })),
  },
  { description: 'One model of the cascade.' },
);

export const ModelCascadeSchema = closed(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false switches the cascade off (default true).' })),
    strategy: Type.Optional(stringEnum(['cascade'] as const, 'How the steps are used: one after the other.')),
    evaluationStrategy: Type.Optional(
      stringEnum(
        EVALUATION_STRATEGIES,
        "How an answer is judged: structured_output (the model's own confidence, default), validator, failure.",
      ),
    ),
    validator: Type.Optional(
      closed(
        {
          pattern: Type.Optional(Type.String({ description: 'Regular expression the answer must match.' })),
          jsonSchema: Type.Optional(freeObject('JSON schema the answer must match (the provider is asked for JSON).')),
        },
        { description: "What the 'validator' evaluation checks." },
      ),
    ),
    maxCostPerRun: Type.Optional(
      Type.Number({ minimum: 0, description: 'Cost (USD, price table) after which no further step is tried.' }),
    ),
    maxTotalDurationMs: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Time after which no further step is tried.' }),
    ),
    steps: Type.Array(CascadeStepSchema, { description: 'The models, cheapest first (at least one when enabled).' }),
  },
  { description: 'Model cascading: cheaper models first, escalating by the evaluation strategy.' },
);

const A2aAgentSchema = closed(
  {
    url: Type.String({
      description: "The peer's agent card URL (…/agent.json), or its base URL (the card is <url>/agent.json).",
    }),
    name: Type.Optional(Type.String({ description: 'Name used in the tool names (default: the name on the card).' })),
    apiKey: Type.Optional(
      Type.String({ description: 'A ${vault:NAME} reference; sent as Authorization: Bearer <key>.' }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Timeout of one call (default 30000).' })),
    skillsFilter: Type.Optional(StringList('Only these skills (by id or name) become tools (default all).')),
  },
  { description: 'A peer agent whose skills the model may call (A2A protocol).' },
);

const instructions = (description: string) =>
  closed({ propertyInstructions: Type.Optional(PropertyInstructionList) }, { description });

export const LlmTaskSchema = closed(
  {
    id: Type.Optional(
      Type.String({ description: 'Task id, unique in the configuration; default name of the response object.' }),
    ),
    type: Type.String({
      description:
        'Provider: openai, anthropic, gemini, gemini-vertex, mistral, azure-openai, bedrock, oracle-genai, ollama, huggingface, jlama.',
    }),
    description: Type.Optional(Type.String({ description: 'What the task does.' })),
    actions: Type.Optional(StringList("Actions that trigger the task ('*' = any action).")),
    parameters: Type.Optional(
      stringMap(
        'Provider parameters, all as text: apiKey, modelName, baseUrl, temperature, systemMessage, prompt, sendConversation, addToOutput, ... A value ${vault:NAME} is read from the secrets vault at run time.',
      ),
    ),
    preRequest: Type.Optional(
      instructions(
        'Property instructions run before the model is called; their properties can be used in prompt and systemMessage.',
      ),
    ),
    postResponse: Type.Optional(
      instructions(
        'Property instructions run after the answer arrived, which they see under responseObjectName (a JSON answer as an object).',
      ),
    ),
    responseObjectName: Type.Optional(
      Type.String({
        description:
          'Name the answer is bound to for the postResponse instructions (default: the task id); not stored in the memory.',
      }),
    ),
    responseMetadataObjectName: Type.Optional(
      Type.String({ description: 'Name under which token usage, finish reason and model are stored.' }),
    ),
    tools: Type.Optional(StringList('HTTP-call set references whose calls the model may use as tools.')),
    enableBuiltInTools: Type.Optional(
      Type.Boolean({ description: 'Offer the built-in tools to the model (default false).' }),
    ),
    builtInToolsWhitelist: Type.Optional(
      StringList(
        "Built-in tools offered (default all): calculator, datetime, dataformatter, webscraper, textsummarizer, fetch_page (alias fetch_tool_response_page), and usermemory (the memory tools, for agents with enableMemoryTools). The original's websearch, weather and pdfreader are not available here (400).",
      ),
    ),
    toolApprovals: Type.Optional(
      StringList(
        "Tools whose calls wait for a person's approval before they run (human in the loop; '*' = every tool of the task): the turn pauses in AWAITING_HUMAN until someone approves (arguments may be edited), rejects (the model hears why) or answers instead of the agent.",
      ),
    ),
    enableHttpCallTools: Type.Optional(
      Type.Boolean({ description: "Offer the calls listed in 'tools' (default true)." }),
    ),
    enableMcpCallTools: Type.Optional(
      Type.Boolean({ description: 'Offer the tools of the MCP-call sets of the same workflow (default true).' }),
    ),
    conversationHistoryLimit: Type.Optional(
      Type.Integer({ minimum: -1, description: 'Previous steps sent as history (default 10; -1 = all).' }),
    ),
    maxContextTokens: Type.Optional(
      Type.Integer({
        minimum: -1,
        description:
          'Estimated-token budget of what is sent (system message, history, input; about 4 characters a token); older steps are left out (default -1 = unbounded).',
      }),
    ),
    anchorFirstSteps: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'With maxContextTokens: the first steps of the conversation always kept in the history (default 2).',
      }),
    ),
    summarizeHistory: Type.Optional(
      Type.Boolean({
        description:
          'Send a rolling summary of the steps that fell out of the history window with the system message (default false).',
      }),
    ),
    modelCascade: Type.Optional(ModelCascadeSchema),
    a2aAgents: Type.Optional(Type.Array(A2aAgentSchema, { description: 'Peer agents as tools (agent mode).' })),
    responseSchema: Type.Optional(
      freeObject(
        'JSON schema the answer must match: the provider is asked for JSON, the answer is checked, a failing one gets one repair request, then the turn ends in ERROR.',
      ),
    ),
    maxToolIterations: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Agent mode: model calls of one turn's tool loop at most (default 10; upstream 6.x field, also read from the parameter of that name).",
      }),
    ),
    knowledgeBases: Type.Optional(
      Type.Array(
        closed(
          {
            name: Type.String({
              minLength: 1,
              description: "The knowledge base's name; the workflow must bind it with a svc://ai.svc.rag step.",
            }),
            maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Top k for this task.' })),
            minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Least relevance score.' })),
          },
          { description: 'A knowledge base this task retrieves from.' },
        ),
        { description: 'Knowledge bases whose best chunks for the input are added to the system message.' },
      ),
    ),
    enableWorkflowRag: Type.Optional(
      Type.Boolean({ description: 'Retrieve from every knowledge base the workflow binds (default false).' }),
    ),
    ragDefaults: Type.Optional(
      closed(
        {
          maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
        },
        { description: 'Retrieval settings for knowledge bases the task names without their own.' },
      ),
    ),
    httpCallRag: Type.Optional(
      Type.String({
        description:
          "Name of an HTTP call of the workflow whose answer is added as context (its templates see the input as '{userInput}').",
      }),
    ),
    maxRagContextChars: Type.Optional(
      Type.Integer({ description: 'Characters of retrieved context at most (default 20000; 0 or -1: no limit).' }),
    ),
    retry: Type.Optional(LlmRetrySchema),
    streamingTimeoutSeconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Backstop for a streamed answer (default 120).' }),
    ),
  },
  { description: 'One LLM task.' },
);

export const LlmConfigurationSchema = closed(
  {
    tasks: Type.Optional(
      Type.Array(LlmTaskSchema, {
        description: 'Tasks, run in order; each fires once per step when one of its actions matches.',
      }),
    ),
  },
  { title: 'LlmConfiguration', description: 'An LLM configuration: model calls triggered by actions.' },
);
export type LlmConfiguration = Static<typeof LlmConfigurationSchema>;

function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  const seen = new Map<string, number>();
  arrayField(body, 'tasks').forEach((task, i) => {
    const path = indexPath('$.tasks', i);
    if (isBlank(task.type)) {
      const at = fieldPath(path, 'type');
      problems.push({ path: at, message: `The LLM task at ${path} needs a non-blank 'type' (the provider).` });
    }
    const id = task.id;
    if (typeof id === 'string') {
      const first = seen.get(id);
      if (first !== undefined) {
        problems.push({
          path: fieldPath(path, 'id'),
          message: `The LLM task id '${id}' at ${path} is already used by $.tasks[${first}]; ids must be unique.`,
        });
      } else {
        seen.set(id, i);
      }
    }
    problems.push(...checkBuiltInTools(task.builtInToolsWhitelist, fieldPath(path, 'builtInToolsWhitelist')));
    problems.push(...checkAnswerFormat(task, path));
    problems.push(...checkA2aAgents(task, fieldPath(path, 'a2aAgents')));
    for (const [suffix, message] of cascadeProblems(task.modelCascade, task)) {
      const at = suffix === '' ? fieldPath(path, 'modelCascade') : `${fieldPath(path, 'modelCascade')}.${suffix}`;
      problems.push({ path: at, message: `${at}: ${message}.` });
    }
    for (const part of ['preRequest', 'postResponse']) {
      const holder = task[part];
      if (isRecord(holder))
        problems.push(
          ...checkPropertyInstructions(
            holder.propertyInstructions,
            fieldPath(fieldPath(path, part), 'propertyInstructions'),
          ),
        );
    }
  });
  return problems;
}

/** Every whitelisted built-in tool exists here; the original's websearch, weather and pdfreader are refused. */
function checkBuiltInTools(list: unknown, path: string): SemanticProblem[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((name, i): SemanticProblem[] => {
    if (typeof name !== 'string' || name.trim() === MEMORY_TOOLS_NAME) return [];
    if (BUILT_IN_TOOL_NAMES.includes(builtInToolName(name))) return [];
    const at = indexPath(path, i);
    const message = UNAVAILABLE_BUILT_IN_TOOLS.includes(name.trim())
      ? `The built-in tool '${name}' at ${at} is not available here; use an HTTP-call set under 'tools' for it.`
      : `'${name}' at ${at} is not a built-in tool; the built-in tools are ${[...BUILT_IN_TOOL_NAMES, MEMORY_TOOLS_NAME].join(', ')}.`;
    return [{ path: at, message }];
  });
}

/** Peer agents have http(s) URLs and keep their keys in the vault (a key in the configuration would be exported). */
function checkA2aAgents(task: Record<string, unknown>, path: string): SemanticProblem[] {
  return arrayField(task, 'a2aAgents').flatMap((agent, i): SemanticProblem[] => {
    const at = indexPath(path, i);
    const problems: SemanticProblem[] = [];
    if (typeof agent.url === 'string' && !isHttpUrl(agent.url))
      problems.push({
        path: fieldPath(at, 'url'),
        message: `The A2A agent URL at ${at} must be an http or https URL.`,
      });
    if (typeof agent.apiKey === 'string' && !/^\$\{vault:[^}\s]+\}$/.test(agent.apiKey.trim()))
      problems.push({
        path: fieldPath(at, 'apiKey'),
        message: `The apiKey at ${at} must be a vault reference \${vault:NAME}, so that the key stays out of the configuration and its exports.`,
      });
    return problems;
  });
}

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** `responseSchema` is a JSON schema; a literal `responseFormat` parameter is "json" or "text". */
function checkAnswerFormat(task: Record<string, unknown>, path: string): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  if (isRecord(task.responseSchema)) {
    try {
      compileAnswerFormat(task.responseSchema);
    } catch (error) {
      if (!(error instanceof ResponseSchemaError)) throw error;
      problems.push({ path: fieldPath(path, 'responseSchema'), message: `${error.message} (at ${path})` });
    }
  }
  const format = isRecord(task.parameters) ? task.parameters.responseFormat : undefined;
  if (typeof format === 'string' && !format.includes('{') && !format.includes('[[')) {
    try {
      jsonModeOf({ responseFormat: format });
    } catch (error) {
      if (!(error instanceof ParameterError)) throw error;
      const at = fieldPath(fieldPath(path, 'parameters'), 'responseFormat');
      problems.push({ path: at, message: `${error.message} (at ${at})` });
    }
  }
  return problems;
}

export const llmKind: ResourceKindDefinition = {
  ...kindNamed('llm'),
  schema: LlmConfigurationSchema,
  renameAliases: aliasRenamer(
    { fields: { tasks: { fields: { tools: { value: canonicalReference } } } } },
    LlmConfigurationSchema,
  ),
  checkSemantics,
  references: (body) =>
    arrayField(body, 'tasks').flatMap((task, i) =>
      Array.isArray(task.tools)
        ? task.tools.map((_, j) => ({ path: ['tasks', i, 'tools', j], kind: 'httpcalls' as const }))
        : [],
    ),
};
