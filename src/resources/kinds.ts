import type { TSchema } from '@sinclair/typebox';

/**
 * The versioned configuration kinds, one row each: every fact about a kind that is not its body (names, paths,
 * reference types, export file names, what the manager shows). The store routes, the legacy path rewrites, the
 * access rules, reference checks, the export layout and the manager (`GET /resourcekinds`) read this table.
 * A kind's body contract (schema, upstream aliases, semantic checks, where it holds references) is its module
 * under `schemas/`, registered in `catalogue.ts`.
 */
export interface ResourceKind {
  /** Internal name, used as the storage key. */
  readonly name: string;
  /** Human name for messages: "dictionary", "behavior set", ... */
  readonly title: string;
  /** Plural label for lists in the manager. */
  readonly label: string;
  /** The manager's route segment: `/manager/resources/<slug>`. */
  readonly slug: string;
  /** Type host after `ai.svc.` in references and in `Location`. */
  readonly uriType: string;
  /** Other type hosts that name this kind in references (upstream 6.x names). */
  readonly uriTypeAliases: readonly string[];
  /** Store path of the spec; `Location` headers use it. */
  readonly storePath: string;
  /** Upstream store paths answered as well (rewritten to `storePath` before routing). */
  readonly legacyStorePaths: readonly string[];
  /** File name extension in export archives: `<id>.<exportName>.json`. */
  readonly exportName: string;
  /** Older file name extensions an import accepts besides `exportName`. */
  readonly importNames: readonly string[];
  /** A minimal valid body the manager offers for "new". */
  readonly template: unknown;
}

export const resourceKinds = [
  {
    name: 'dictionary',
    slug: 'dictionaries',
    title: 'dictionary',
    label: 'Dictionaries',
    uriType: 'regulardictionary',
    uriTypeAliases: ['dictionary'],
    storePath: '/regulardictionarystore/regulardictionaries',
    legacyStorePaths: ['/dictionarystore/dictionaries'],
    exportName: 'regulardictionary',
    importNames: ['dictionary'],
    template: { words: [{ word: 'hello', expressions: 'greeting(hello)' }], phrases: [] },
  },
  {
    name: 'behavior',
    slug: 'behaviorsets',
    title: 'behavior set',
    label: 'Behavior sets',
    uriType: 'behavior',
    uriTypeAliases: ['rules'],
    storePath: '/behaviorstore/behaviorsets',
    legacyStorePaths: ['/rulestore/rulesets'],
    exportName: 'behavior',
    importNames: ['rules'],
    template: {
      behaviorGroups: [
        {
          name: 'Main',
          behaviorRules: [
            {
              name: 'Greeting',
              actions: ['greet'],
              conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
            },
          ],
        },
      ],
    },
  },
  {
    name: 'output',
    slug: 'outputsets',
    title: 'output set',
    label: 'Output sets',
    uriType: 'output',
    uriTypeAliases: [],
    storePath: '/outputstore/outputsets',
    legacyStorePaths: [],
    exportName: 'output',
    importNames: [],
    template: {
      outputSet: [
        { action: 'greet', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello!' }] }] },
      ],
    },
  },
  {
    name: 'workflow',
    slug: 'workflows',
    title: 'workflow',
    label: 'Workflows',
    uriType: 'package',
    uriTypeAliases: ['workflow'],
    storePath: '/packagestore/packages',
    legacyStorePaths: ['/workflowstore/workflows'],
    exportName: 'workflow',
    importNames: ['package'],
    template: { packageExtensions: [{ type: 'svc://ai.svc.templating', config: {} }] },
  },
  {
    name: 'agent',
    slug: 'agents',
    title: 'agent',
    label: 'Agents',
    uriType: 'agent',
    uriTypeAliases: ['bot'],
    storePath: '/agentstore/agents',
    legacyStorePaths: ['/botstore/bots'],
    exportName: 'agent',
    importNames: ['bot'],
    template: { packages: [] },
  },
  {
    name: 'property',
    slug: 'propertysetters',
    title: 'property setter',
    label: 'Property setters',
    uriType: 'property',
    uriTypeAliases: [],
    storePath: '/propertysetterstore/propertysetters',
    legacyStorePaths: [],
    exportName: 'property',
    importNames: [],
    template: {
      setOnActions: [
        {
          actions: ['greet'],
          setProperties: [{ name: 'lastInput', fromObjectPath: 'memory.current.input', scope: 'conversation' }],
        },
      ],
    },
  },
  {
    name: 'httpcalls',
    slug: 'httpcalls',
    title: 'HTTP-call set',
    label: 'HTTP calls',
    uriType: 'httpcalls',
    uriTypeAliases: ['apicalls'],
    storePath: '/httpcallsstore/httpcalls',
    legacyStorePaths: ['/apicallstore/apicalls'],
    exportName: 'httpcalls',
    importNames: ['apicalls'],
    template: {
      targetServerUrl: 'https://example.org',
      httpCalls: [
        {
          name: 'lookup',
          actions: ['lookup'],
          saveResponse: true,
          responseObjectName: 'lookup',
          request: { method: 'GET', path: '/api' },
        },
      ],
    },
  },
  {
    name: 'mcpcalls',
    slug: 'mcpcalls',
    title: 'MCP-call set',
    label: 'MCP calls',
    uriType: 'mcpcalls',
    uriTypeAliases: [],
    storePath: '/mcpcallsstore/mcpcalls',
    legacyStorePaths: [],
    exportName: 'mcpcalls',
    importNames: [],
    template: {
      mcpServerUrl: 'https://tools.example.org/mcp',
      transport: 'http',
      headers: { Authorization: 'Bearer ${vault:TOOLS_KEY}' },
      mcpCalls: [],
    },
  },
  {
    name: 'llm',
    slug: 'llms',
    title: 'LLM configuration',
    label: 'LLM configurations',
    uriType: 'llm',
    uriTypeAliases: ['langchain'],
    storePath: '/langchainstore/langchains',
    legacyStorePaths: ['/llmstore/llms'],
    exportName: 'langchain',
    importNames: ['llm'],
    template: {
      tasks: [
        {
          actions: ['ask_llm'],
          id: 'assistant',
          type: 'openai',
          description: 'Answers questions',
          parameters: {
            apiKey: '${vault:OPENAI_API_KEY}',
            modelName: 'gpt-4o-mini',
            systemMessage: 'You are helpful.',
            addToOutput: 'true',
          },
        },
      ],
    },
  },
  {
    name: 'rag',
    slug: 'rags',
    title: 'knowledge base',
    label: 'Knowledge bases',
    uriType: 'rag',
    uriTypeAliases: [],
    storePath: '/ragstore/rags',
    legacyStorePaths: [],
    exportName: 'rag',
    importNames: [],
    template: {
      name: 'product-docs',
      embeddingProvider: 'openai',
      embeddingParameters: { model: 'text-embedding-3-small', apiKey: '${vault:OPENAI_API_KEY}' },
      chunkSize: 512,
      chunkOverlap: 64,
      maxResults: 5,
      minScore: 0.6,
    },
  },
  {
    name: 'transcript',
    slug: 'transcripts',
    title: 'transcript',
    label: 'Transcripts',
    uriType: 'transcript',
    uriTypeAliases: [],
    storePath: '/transcriptstore/transcripts',
    legacyStorePaths: [],
    exportName: 'transcript',
    importNames: [],
    template: {
      turns: [{ input: 'hello', expected: { output: { value: ['Hello!'], compare: 'exact' } } }],
    },
  },
  {
    name: 'transcriptsuite',
    slug: 'transcriptsuites',
    title: 'transcript suite',
    label: 'Transcript suites',
    uriType: 'transcriptsuite',
    uriTypeAliases: [],
    storePath: '/transcriptstore/suites',
    legacyStorePaths: [],
    exportName: 'transcriptsuite',
    importNames: [],
    template: { transcripts: [] },
  },
  {
    name: 'group',
    slug: 'groups',
    title: 'group',
    label: 'Groups',
    uriType: 'group',
    uriTypeAliases: [],
    storePath: '/groupstore/groups',
    legacyStorePaths: [],
    exportName: 'group',
    importNames: [],
    template: {
      members: [
        { agentId: '000000000000000000000001', displayName: 'First expert', speakingOrder: 1 },
        { agentId: '000000000000000000000002', displayName: 'Second expert', speakingOrder: 2 },
      ],
      moderatorAgentId: '000000000000000000000003',
      style: 'ROUND_TABLE',
      maxRounds: 1,
    },
  },
  {
    name: 'schedule',
    slug: 'schedules',
    title: 'schedule',
    label: 'Schedules',
    uriType: 'schedule',
    uriTypeAliases: [],
    storePath: '/schedulestore/schedules',
    legacyStorePaths: [],
    exportName: 'schedule',
    importNames: [],
    template: {
      agentId: '000000000000000000000000',
      environment: 'production',
      cron: '0 9 * * 1-5',
      timeZone: 'UTC',
      message: 'Good morning',
      conversation: 'new',
      enabled: true,
      missedRuns: 'skip',
    },
  },
] as const satisfies readonly ResourceKind[];

export type KindName = (typeof resourceKinds)[number]['name'];

/** A kind's facts together with its body contract (see `catalogue.ts`). */
export interface ResourceKindDefinition extends ResourceKind, KindBody {
  readonly name: KindName;
}

/** What a kind's module under `schemas/` says about its bodies. */
export interface KindBody {
  /** The body schema in the spec's names (TypeBox; `additionalProperties: false` at every depth). */
  readonly schema: TSchema;
  /**
   * Renames upstream field names to the spec's names, at every depth, returning a new value.
   * Throws `invalid` when a body gives both a name and its alias. Unknown fields are left for the schema to reject.
   */
  readonly renameAliases: (body: unknown) => unknown;
  /**
   * Rules the schema cannot express (reference form, condition configs, ...). Returns the problems found,
   * each naming the JSON path, or an empty list. Runs after the schema accepted the body.
   */
  readonly checkSemantics: (body: unknown) => readonly SemanticProblem[];
  /** Where a body holds references to other resources (export, import), in document order. */
  readonly references?: (body: unknown) => readonly BodyReference[];
  /**
   * The lists `PATCH <store>/<id>` edits (upstream 6.x: SET replaces or adds entries, DELETE removes them), each
   * with what makes two entries the same one. Kinds without it take no PATCH.
   */
  readonly patchLists?: Readonly<Record<string, (entry: Record<string, unknown>) => string>>;
  /** Where a body names agents by id (schedules): writing it needs USE on each, as for references. */
  readonly agentTargets?: (body: unknown) => readonly { readonly path: string; readonly agentId: string }[];
  /**
   * Kinds whose resources belong to an agent without the agent referencing them (transcripts, schedules): an
   * agent's export carries those whose `ownerOf` is the agent, and an import binds them to the agent it writes.
   */
  readonly agentOwned?: {
    /** The agent id a body belongs to, if any. */
    ownerOf(body: unknown): string | undefined;
    /** The body bound to the agent version an import writes. */
    bind(body: unknown, agentId: string, agentVersion: number): unknown;
  };
}

/** A reference in a body: where it is, and the kind it must name (any configuration kind when absent). */
export interface BodyReference {
  readonly path: JsonPath;
  readonly kind?: KindName;
}

/** A location in a JSON body: field names and list indexes. */
export type JsonPath = readonly (string | number)[];

export interface SemanticProblem {
  readonly path: string;
  readonly message: string;
}

const byName = new Map<string, ResourceKind & { readonly name: KindName }>(
  resourceKinds.map((kind) => [kind.name, kind]),
);
const byUriType = new Map<string, KindName>();
const byExportName = new Map<string, KindName>();
for (const kind of resourceKinds) {
  for (const type of [kind.uriType, ...kind.uriTypeAliases]) byUriType.set(type, kind.name);
  for (const fileName of [kind.exportName, ...kind.importNames]) byExportName.set(fileName, kind.name);
}

/** The kind named by a reference's type host (`regulardictionary`, `dictionary`, `rules`, ...). */
export function kindOfUriType(type: string): (ResourceKind & { readonly name: KindName }) | undefined {
  const name = byUriType.get(type);
  return name === undefined ? undefined : byName.get(name);
}

/** The kind of an export file extension (`regulardictionary`, or an older name such as `rules`). */
export function kindOfExportName(fileName: string): KindName | undefined {
  return byExportName.get(fileName);
}

export function kindNamed(name: string): ResourceKind & { readonly name: KindName } {
  const kind = byName.get(name);
  if (!kind) throw new Error(`unknown resource kind ${name}`);
  return kind;
}
