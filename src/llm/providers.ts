import { createHash } from 'node:crypto';
import type { LanguageModel } from 'ai';
import { LRUCache } from 'lru-cache';
import { CONNECTION_PARAMETERS, integer, number, text, type Parameters } from './parameters.ts';

/**
 * The provider registry (reference §9.2): a task's `type` and its parameters become an AI SDK language model plus
 * the call settings (temperature, token limit, ...). Every provider's base URL can be overridden (`baseUrl`, or
 * `endpoint` for Azure), which is also how OpenAI-compatible servers are reached (`openai` + `baseUrl`, through
 * the chat-completions API). Models are built lazily and cached per (type, connection parameters); the cache key
 * is a SHA-256 digest, so no credential is kept in clear outside the model client itself.
 */

// The AI SDK prints compatibility warnings to stderr; the service has its own logs.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export const PROVIDER_TYPES = [
  'openai',
  'anthropic',
  'gemini',
  'gemini-vertex',
  'mistral',
  'azure-openai',
  'bedrock',
  'oracle-genai',
  'ollama',
  'huggingface',
  'jlama',
] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export interface ProviderDefaults {
  /** `svc.ollama.default-base-url`. */
  readonly ollamaBaseUrl: string;
  /** How every provider reaches its API (in the service: the guarded outbound dispatcher); default: global fetch. */
  readonly fetch?: typeof globalThis.fetch | undefined;
}

export interface CallSettings {
  readonly temperature?: number;
  readonly maxOutputTokens?: number;
  readonly topK?: number;
  readonly topP?: number;
}

export interface ModelSpec {
  readonly provider: string;
  readonly modelName: string;
  readonly model: LanguageModel;
  readonly settings: CallSettings;
  /** Provider timeout (`timeout` parameter, seconds), in milliseconds. */
  readonly timeoutMs: number | undefined;
}

/** A configuration problem the author can fix (unknown type, missing parameter, provider unavailable here). */
export class ProviderConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderConfigurationError';
  }
}

export function isProviderType(type: string): type is ProviderType {
  return (PROVIDER_TYPES as readonly string[]).includes(type);
}

interface ProviderDefinition {
  /** Parameters that must be given (checked at deployment when they hold no template). */
  readonly required?: ReadonlyArray<readonly string[]>;
  readonly defaultModel?: string;
  readonly modelParameters: readonly string[];
  build(parameters: Parameters, modelName: string, defaults: ProviderDefaults): Promise<LanguageModel>;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** An Azure OpenAI endpoint (`https://<resource>.openai.azure.com`, with or without `/openai`) as the SDK's base URL. */
function azureBaseUrl(endpoint: string | undefined): string | undefined {
  return endpoint === undefined ? undefined : `${trimSlash(endpoint).replace(/\/openai$/, '')}/openai`;
}

/** An Ollama server's URL (with or without `/api`) as the SDK's base URL. */
function ollamaApiUrl(baseUrl: string): string {
  const base = trimSlash(baseUrl);
  return base.endsWith('/api') ? base : `${base}/api`;
}

/** A provider whose SDK takes an API key and an optional base URL, and whose model is named by `modelName` or `model`. */
function apiKeyProvider(
  create: () => Promise<
    (settings: {
      apiKey: string;
      baseURL: string | undefined;
      fetch: ProviderDefaults['fetch'];
    }) => (modelName: string) => LanguageModel
  >,
  defaultModel: string,
): ProviderDefinition {
  return {
    defaultModel,
    modelParameters: ['modelName', 'model'],
    build: async (p, modelName, { fetch }) => (await create())(apiKeySettings(p, fetch))(modelName),
  };
}

/*
 * The SDK provider instances, from a task's (or a knowledge base's) parameters: shared by the language models here
 * and the embedding models of knowledge bases (`src/knowledge/embedding-providers.ts`). Each provider's package is
 * imported when a model of it is first built: together they hold ~14 MiB of heap, which a service whose agents use
 * one provider, or none, need not keep (nor every full collection mark).
 */

/** API key and base URL: the settings of the SDKs that need nothing else. */
export function apiKeySettings(p: Parameters, fetch: ProviderDefaults['fetch']) {
  return { apiKey: text(p, 'apiKey') ?? '', baseURL: text(p, 'baseUrl'), fetch };
}

export async function openAiProvider(p: Parameters, fetch: ProviderDefaults['fetch']) {
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({
    ...apiKeySettings(p, fetch),
    organization: text(p, 'organization'),
    project: text(p, 'project'),
  });
}

export async function azureProvider(p: Parameters, fetch: ProviderDefaults['fetch']) {
  const { createAzure } = await import('@ai-sdk/azure');
  return createAzure({
    apiKey: text(p, 'apiKey') ?? '',
    resourceName: text(p, 'resourceName'),
    baseURL: azureBaseUrl(text(p, 'endpoint', 'baseUrl')),
    apiVersion: text(p, 'apiVersion'),
    useDeploymentBasedUrls: true,
    fetch,
  });
}

export async function bedrockProvider(p: Parameters, fetch: ProviderDefaults['fetch']) {
  const { createAmazonBedrock } = await import('@ai-sdk/amazon-bedrock');
  return createAmazonBedrock({
    region: text(p, 'region'),
    baseURL: text(p, 'baseUrl'),
    accessKeyId: text(p, 'accessKeyId'),
    secretAccessKey: text(p, 'secretAccessKey'),
    sessionToken: text(p, 'sessionToken'),
    fetch,
  });
}

export async function ollamaProvider(p: Parameters, { ollamaBaseUrl, fetch }: ProviderDefaults) {
  const { createOllama } = await import('ollama-ai-provider-v2');
  const apiKey = text(p, 'apiKey');
  return createOllama({
    baseURL: ollamaApiUrl(text(p, 'baseUrl') ?? ollamaBaseUrl),
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : undefined,
    fetch,
  });
}

const providers: Record<Exclude<ProviderType, 'jlama'>, ProviderDefinition> = {
  openai: {
    defaultModel: 'gpt-4o-mini',
    modelParameters: ['modelName', 'model'],
    build: async (p, modelName, { fetch }) => (await openAiProvider(p, fetch)).chat(modelName),
  },
  anthropic: apiKeyProvider(async () => (await import('@ai-sdk/anthropic')).createAnthropic, 'claude-3-5-haiku-latest'),
  gemini: apiKeyProvider(async () => (await import('@ai-sdk/google')).createGoogle, 'gemini-2.0-flash'),
  'gemini-vertex': {
    required: [['modelId', 'modelID', 'modelName']],
    modelParameters: ['modelId', 'modelID', 'modelName'],
    build: async (p, modelName, { fetch }) =>
      (await import('@ai-sdk/google-vertex')).createGoogleVertex({
        project: text(p, 'projectId'),
        location: text(p, 'location'),
        baseURL: text(p, 'baseUrl'),
        apiKey: text(p, 'apiKey'),
        fetch,
      })(modelName),
  },
  mistral: apiKeyProvider(async () => (await import('@ai-sdk/mistral')).createMistral, 'mistral-small-latest'),
  'azure-openai': {
    required: [['deploymentName', 'modelName']],
    modelParameters: ['deploymentName', 'modelName'],
    build: async (p, modelName, { fetch }) => {
      const nonAzureKey = text(p, 'nonAzureApiKey');
      if (nonAzureKey !== undefined) {
        const { createOpenAI } = await import('@ai-sdk/openai');
        return createOpenAI({ apiKey: nonAzureKey, baseURL: text(p, 'baseUrl'), fetch }).chat(modelName);
      }
      const endpoint = text(p, 'endpoint', 'baseUrl');
      if (endpoint === undefined && text(p, 'resourceName') === undefined) {
        throw new ProviderConfigurationError(
          "The azure-openai provider needs the parameter 'endpoint' (e.g. https://<resource>.openai.azure.com).",
        );
      }
      return (await azureProvider(p, fetch)).chat(modelName);
    },
  },
  bedrock: {
    required: [['modelId', 'modelName']],
    modelParameters: ['modelId', 'modelName'],
    build: async (p, modelName, { fetch }) => (await bedrockProvider(p, fetch))(modelName),
  },
  'oracle-genai': {
    required: [['baseUrl'], ['modelName', 'model']],
    modelParameters: ['modelName', 'model'],
    build: async (p, modelName, { fetch }) =>
      (await import('@ai-sdk/openai-compatible'))
        .createOpenAICompatible({
          name: 'oracle-genai',
          baseURL: text(p, 'baseUrl')!,
          apiKey: text(p, 'apiKey'),
          includeUsage: true,
          fetch,
        })
        .chatModel(modelName),
  },
  ollama: {
    defaultModel: 'llama3.2',
    modelParameters: ['model', 'modelName'],
    build: async (p, modelName, defaults) => (await ollamaProvider(p, defaults))(modelName),
  },
  huggingface: {
    required: [['modelId', 'modelName']],
    modelParameters: ['modelId', 'modelName'],
    build: async (p, modelName, { fetch }) =>
      (await import('@ai-sdk/huggingface')).createHuggingFace({
        apiKey: text(p, 'accessToken', 'apiKey') ?? '',
        baseURL: text(p, 'baseUrl'),
        fetch,
      })(modelName),
  },
};

const reasonsUnavailable: Partial<Record<ProviderType, string>> = {
  jlama:
    "The provider 'jlama' runs models inside the Java virtual machine (local in-JVM inference), which this service cannot do. Run the model with Ollama instead and use the provider type 'ollama' (parameters 'model' and 'baseUrl').",
};

/**
 * Checks a task's provider at deployment: the type must be known and available here, and required parameters
 * present. `given(name)` tells whether a parameter has a (possibly templated) value.
 */
export function checkProvider(type: string, given: (name: string) => boolean): void {
  const unavailable = reasonsUnavailable[type as ProviderType];
  if (unavailable) throw new ProviderConfigurationError(unavailable);
  if (!isProviderType(type)) {
    throw new ProviderConfigurationError(
      `Unknown LLM provider type '${type}'; known types: ${PROVIDER_TYPES.filter((t) => !reasonsUnavailable[t]).join(', ')}.`,
    );
  }
  const definition = providers[type as Exclude<ProviderType, 'jlama'>];
  for (const alternatives of definition.required ?? []) {
    if (!alternatives.some(given)) {
      const names = alternatives.map((name) => `'${name}'`).join(' or ');
      throw new ProviderConfigurationError(`The ${type} provider needs the parameter ${names}.`);
    }
  }
}

/** Call settings and timeout from the parameters (shared names across providers, §9.2). */
export function callSettingsOf(
  type: string,
  parameters: Parameters,
): { settings: CallSettings; timeoutMs: number | undefined } {
  const maxOutputTokens =
    integer(parameters, 'maxTokens', 'maxOutputTokens', 'maxNewTokens') ?? (type === 'anthropic' ? 16_384 : undefined);
  const settings: CallSettings = {
    ...optional('temperature', number(parameters, 'temperature')),
    ...optional('maxOutputTokens', maxOutputTokens),
    ...optional('topK', integer(parameters, 'topK')),
    ...optional('topP', number(parameters, 'topP')),
  };
  const timeout = number(parameters, 'timeout');
  return { settings, timeoutMs: timeout !== undefined && timeout > 0 ? timeout * 1000 : undefined };
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

export function modelNameOf(type: string, parameters: Parameters): string {
  const definition = providers[type as Exclude<ProviderType, 'jlama'>];
  return (definition && text(parameters, ...definition.modelParameters)) ?? definition?.defaultModel ?? 'default';
}

/** Builds models on first use and keeps them per (type, connection parameters), least recently used out first. */
export class ModelRegistry {
  readonly #defaults: ProviderDefaults;
  readonly #models: LRUCache<string, LanguageModel>;

  constructor(defaults: ProviderDefaults, maxSize = 200) {
    this.#defaults = defaults;
    this.#models = new LRUCache({ max: maxSize });
  }

  get size(): number {
    return this.#models.size;
  }

  /** The model and call settings for resolved parameters (templates rendered, vault references resolved). */
  async spec(type: string, parameters: Parameters): Promise<ModelSpec> {
    checkProvider(type, (name) => text(parameters, name) !== undefined);
    const modelName = modelNameOf(type, parameters);
    const callSettings = callSettingsOf(type, parameters);
    const key = cacheKey(type, parameters);
    let model = this.#models.get(key);
    if (!model) {
      model = await providers[type as Exclude<ProviderType, 'jlama'>].build(parameters, modelName, this.#defaults);
      this.#models.set(key, model);
    }
    return { provider: type, modelName, model, ...callSettings };
  }
}

function cacheKey(type: string, parameters: Parameters): string {
  const connection = CONNECTION_PARAMETERS.map((name) => [name, parameters[name] ?? null]);
  return createHash('sha256')
    .update(JSON.stringify([type, connection]))
    .digest('hex');
}
