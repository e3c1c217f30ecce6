/** The configuration kinds the manager edits, with their store paths (README "Configuration resources"). */

export interface ResourceKind {
  /** Route segment, e.g. `dictionaries`. */
  readonly slug: string;
  /** `svc://ai.svc.<type>` */
  readonly type: string;
  readonly storePath: string;
  readonly label: string;
  readonly singular: string;
  /** A minimal valid body for "new". */
  readonly template: unknown;
}

export const resourceKinds: readonly ResourceKind[] = [
  { slug: 'dictionaries', type: 'regulardictionary', storePath: '/regulardictionarystore/regulardictionaries', label: 'Dictionaries', singular: 'dictionary', template: { words: [{ word: 'hello', expressions: 'greeting(hello)' }], phrases: [] } },
  { slug: 'behaviorsets', type: 'behavior', storePath: '/behaviorstore/behaviorsets', label: 'Behavior sets', singular: 'behavior set', template: { behaviorGroups: [{ name: 'Main', behaviorRules: [{ name: 'Greeting', actions: ['greet'], conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }] }] }] } },
  { slug: 'outputsets', type: 'output', storePath: '/outputstore/outputsets', label: 'Output sets', singular: 'output set', template: { outputSet: [{ action: 'greet', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello!' }] }] }] } },
  { slug: 'propertysetters', type: 'property', storePath: '/propertysetterstore/propertysetters', label: 'Property setters', singular: 'property setter', template: { setOnActions: [{ actions: ['greet'], setProperties: [{ name: 'lastInput', fromObjectPath: 'memory.current.input', scope: 'conversation' }] }] } },
  { slug: 'httpcalls', type: 'httpcalls', storePath: '/httpcallsstore/httpcalls', label: 'HTTP calls', singular: 'HTTP-call set', template: { targetServerUrl: 'https://example.org', httpCalls: [{ name: 'lookup', actions: ['lookup'], saveResponse: true, responseObjectName: 'lookup', request: { method: 'GET', path: '/api' } }] } },
  { slug: 'llms', type: 'llm', storePath: '/langchainstore/langchains', label: 'LLM configurations', singular: 'LLM configuration', template: { tasks: [{ actions: ['ask_llm'], id: 'assistant', type: 'openai', description: 'Answers questions', parameters: { apiKey: '${vault:OPENAI_API_KEY}', modelName: 'gpt-4o-mini', systemMessage: 'You are helpful.', addToOutput: 'true' } }] } },
  { slug: 'workflows', type: 'package', storePath: '/packagestore/packages', label: 'Workflows', singular: 'workflow', template: { packageExtensions: [{ type: 'svc://ai.svc.templating', config: {} }] } },
];

export const agentKind: ResourceKind = { slug: 'agents', type: 'agent', storePath: '/agentstore/agents', label: 'Agents', singular: 'agent', template: { packages: [] } };

export function kindBySlug(slug: string): ResourceKind | undefined {
  return [...resourceKinds, agentKind].find((k) => k.slug === slug);
}

export function kindByStorePath(storePath: string): ResourceKind | undefined {
  return [...resourceKinds, agentKind].find((k) => k.storePath === storePath);
}

/** Known extension types, for people. */
export const extensionLabels: Record<string, string> = {
  'svc://ai.svc.parser': 'Parser',
  'svc://ai.svc.behavior': 'Behavior rules',
  'svc://ai.svc.property': 'Property setter',
  'svc://ai.svc.httpcalls': 'HTTP calls',
  'svc://ai.svc.llm': 'LLM',
  'svc://ai.svc.output': 'Output',
  'svc://ai.svc.templating': 'Templating',
};

export const environments = ['production', 'test'] as const;
