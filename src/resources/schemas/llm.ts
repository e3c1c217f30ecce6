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
} from './common.ts';
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
        'Built-in tools offered (default all): calculator, datetime, websearch, dataformatter, webscraper, textsummarizer, pdfreader, weather, fetch_page.',
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
    enableMcpCallTools: Type.Optional(Type.Boolean({ description: 'Offer MCP tools (default true).' })),
    conversationHistoryLimit: Type.Optional(
      Type.Integer({ minimum: -1, description: 'Previous steps sent as history (default 10; -1 = all).' }),
    ),
    maxContextTokens: Type.Optional(
      Type.Integer({ minimum: -1, description: 'Token budget of the history (default -1 = unbounded).' }),
    ),
    anchorFirstSteps: Type.Optional(
      Type.Integer({ minimum: 0, description: 'First steps always kept in the history (default 2).' }),
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
