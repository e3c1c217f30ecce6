import { createHash } from 'node:crypto';
import type { EmbeddingModel } from 'ai';
import { LRUCache } from 'lru-cache';
import { text, type Parameters } from '../llm/parameters.ts';
import {
  apiKeySettings,
  azureProvider,
  bedrockProvider,
  ollamaProvider,
  openAiProvider,
  type ProviderDefaults,
} from '../llm/providers.ts';

/**
 * Embedding models of a knowledge base (`embeddingProvider` + `embeddingParameters`, the original's names), built
 * with the AI SDK's providers. `openai` with a `baseUrl` reaches any OpenAI-compatible server (`/embeddings`).
 * Models are cached per (provider, parameters) under a SHA-256 digest, so no credential is a cache key in clear.
 */

interface EmbeddingProvider {
  readonly defaultModel: string;
  /** Parameters one of which must be given (checked when the knowledge base is written). */
  readonly required?: ReadonlyArray<readonly string[]>;
  build(parameters: Parameters, model: string, defaults: EmbeddingDefaults): Promise<EmbeddingModel>;
  /**
   * How this provider's SDK takes the wanted dimensions and the texts' purpose, where it does not take them as the
   * AI SDK's own `dimensions` (the default).
   */
  call?(model: string, purpose: EmbeddingPurpose, dimensions: number | undefined): EmbeddingCall;
}

/** Documents are embedded for the index, queries for searching it (some models embed the two differently). */
export type EmbeddingPurpose = 'document' | 'query';

/** The options of one `embedMany` call besides the model and the texts. */
export interface EmbeddingCall {
  readonly dimensions?: number;
  /** Per provider name (as the SDK reads them), its options. */
  readonly providerOptions?: Record<string, Record<string, string | number>>;
}

const withDimensions = (dimensions: number | undefined): EmbeddingCall =>
  dimensions === undefined ? {} : { dimensions };

/**
 * Bedrock's embedding models read their options from `providerOptions` only: Titan `dimensions`, Cohere
 * `outputDimension` and `inputType` (documents and queries embedded each for its role), Nova `embeddingDimension`
 * and `embeddingPurpose`.
 */
function bedrockCall(model: string, purpose: EmbeddingPurpose, dimensions: number | undefined): EmbeddingCall {
  if (model.includes('cohere.embed-'))
    return {
      providerOptions: {
        bedrock: {
          inputType: purpose === 'document' ? 'search_document' : 'search_query',
          ...(dimensions === undefined ? {} : { outputDimension: dimensions }),
        },
      },
    };
  if (model.includes('amazon.nova-'))
    return {
      providerOptions: {
        bedrock: {
          embeddingPurpose: purpose === 'document' ? 'GENERIC_INDEX' : 'TEXT_RETRIEVAL',
          ...(dimensions === undefined ? {} : { embeddingDimension: dimensions }),
        },
      },
    };
  return dimensions === undefined ? {} : { providerOptions: { bedrock: { dimensions } } };
}

/** The Ollama default and how providers reach their APIs (in the service: the guarded outbound dispatcher). */
export type EmbeddingDefaults = ProviderDefaults;

const providers: Record<string, EmbeddingProvider> = {
  openai: {
    defaultModel: 'text-embedding-3-small',
    build: async (p, model, { fetch }) => (await openAiProvider(p, fetch)).embedding(model),
  },
  'azure-openai': {
    defaultModel: 'text-embedding-3-small',
    required: [['endpoint', 'baseUrl', 'resourceName']],
    build: async (p, model, { fetch }) => (await azureProvider(p, fetch)).embedding(text(p, 'deploymentName') ?? model),
    // The Azure provider's OpenAI embedding model reads `dimensions` from the `openai` provider options only.
    call: (_model, _purpose, dimensions) =>
      dimensions === undefined ? {} : { dimensions, providerOptions: { openai: { dimensions } } },
  },
  mistral: {
    defaultModel: 'mistral-embed',
    build: async (p, model, { fetch }) =>
      (await import('@ai-sdk/mistral')).createMistral(apiKeySettings(p, fetch)).embedding(model),
  },
  gemini: {
    defaultModel: 'gemini-embedding-001',
    build: async (p, model, { fetch }) =>
      (await import('@ai-sdk/google')).createGoogle(apiKeySettings(p, fetch)).embedding(model),
    // Gemini embeds documents and queries for retrieval each with its own task type.
    call: (_model, purpose, dimensions) => ({
      ...withDimensions(dimensions),
      providerOptions: { google: { taskType: purpose === 'document' ? 'RETRIEVAL_DOCUMENT' : 'RETRIEVAL_QUERY' } },
    }),
  },
  vertex: {
    defaultModel: 'text-embedding-005',
    required: [['project']],
    build: async (p, model, { fetch }) =>
      (await import('@ai-sdk/google-vertex'))
        .createGoogleVertex({
          project: text(p, 'project'),
          location: text(p, 'location') ?? 'us-central1',
          baseURL: text(p, 'baseUrl'),
          apiKey: text(p, 'apiKey'),
          fetch,
        })
        .embeddingModel(model),
  },
  bedrock: {
    defaultModel: 'amazon.titan-embed-text-v2:0',
    // The original's default region.
    build: async (p, model, { fetch }) =>
      (await bedrockProvider({ region: 'us-east-1', ...p }, fetch)).embedding(model),
    call: bedrockCall,
  },
  ollama: {
    defaultModel: 'nomic-embed-text',
    build: async (p, model, defaults) => (await ollamaProvider(p, defaults)).embedding(model),
    // The Ollama provider reads `dimensions` from its provider options only.
    call: (_model, _purpose, dimensions) =>
      dimensions === undefined ? {} : { providerOptions: { ollama: { dimensions } } },
  },
};

export const EMBEDDING_PROVIDERS: readonly string[] = Object.keys(providers);

const unavailable: Readonly<Record<string, string>> = {
  cohere:
    "The embedding provider 'cohere' is not available in this service; use openai (also for OpenAI-compatible servers through 'baseUrl'), azure-openai, mistral, gemini, vertex, bedrock or ollama.",
};

/** Why a provider and its parameters cannot embed, or undefined when they can (checked when a knowledge base is written). */
export function embeddingProviderProblem(provider: string, parameters: Parameters): string | undefined {
  const reason = unavailable[provider];
  if (reason) return reason;
  const definition = providers[provider];
  if (!definition)
    return `Unknown embedding provider '${provider}'; known providers: ${EMBEDDING_PROVIDERS.join(', ')}.`;
  for (const alternatives of definition.required ?? []) {
    if (!alternatives.some((name) => text(parameters, name) !== undefined))
      return `The embedding provider '${provider}' needs the parameter ${alternatives.map((name) => `'${name}'`).join(' or ')}.`;
  }
  return undefined;
}

/** The model name a knowledge base embeds with: `model` (or `modelName`), else the provider's default. */
export function embeddingModelName(provider: string, parameters: Parameters): string {
  return text(parameters, 'model', 'modelName') ?? providers[provider]?.defaultModel ?? 'default';
}

/** The call options of an embedding with this provider and model. */
export function embeddingCall(
  provider: string,
  model: string,
  purpose: EmbeddingPurpose,
  dimensions: number | undefined,
): EmbeddingCall {
  return providers[provider]?.call?.(model, purpose, dimensions) ?? withDimensions(dimensions);
}

/** Builds embedding models on first use and keeps them per (provider, parameters). */
export class EmbeddingModels {
  readonly #defaults: EmbeddingDefaults;
  readonly #models = new LRUCache<string, EmbeddingModel>({ max: 100 });

  constructor(defaults: EmbeddingDefaults) {
    this.#defaults = defaults;
  }

  /** Parameters must be resolved (vault references replaced). Throws when the provider cannot embed. */
  async model(provider: string, parameters: Parameters): Promise<EmbeddingModel> {
    const problem = embeddingProviderProblem(provider, parameters);
    if (problem) throw new Error(problem);
    const key = createHash('sha256')
      .update(JSON.stringify([provider, Object.entries(parameters).sort(([a], [b]) => a.localeCompare(b))]))
      .digest('hex');
    let model = this.#models.get(key);
    if (!model) {
      model = await providers[provider]!.build(parameters, embeddingModelName(provider, parameters), this.#defaults);
      this.#models.set(key, model);
    }
    return model;
  }
}
