import { Type, type Static } from '@sinclair/typebox';
import { embeddingProviderProblem, EMBEDDING_PROVIDERS } from '../../knowledge/embedding-providers.ts';
import { isRecord } from '../../shared/json.ts';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { aliasRenamer, closed, stringEnum, stringMap } from './common.ts';

/**
 * A knowledge base (the original's `RagConfiguration`, its field names): how documents are embedded (provider,
 * parameters with `${vault:…}` keys), chunked, and retrieved. Its documents and their chunks are not part of the
 * body: they live in the service's own store (`src/knowledge/`), keyed by the knowledge base's id.
 */

export const CHUNK_STRATEGIES = ['recursive', 'paragraph', 'sentence', 'token'] as const;
export type ChunkStrategy = (typeof CHUNK_STRATEGIES)[number];

export const RAG_DEFAULTS = {
  embeddingProvider: 'openai',
  chunkStrategy: 'recursive' as ChunkStrategy,
  chunkSize: 512,
  chunkOverlap: 64,
  maxResults: 5,
  minScore: 0.6,
  keywordWeight: 0.3,
} as const;

/** The only `storeType` here: chunks are kept in the service's store (so, unlike the original's, they persist). */
const STORE_TYPES = ['in-memory'] as const;

export const RagConfigurationSchema = closed(
  {
    name: Type.String({
      minLength: 1,
      description: "The knowledge base's name; an LLM task's knowledgeBases[].name selects it.",
    }),
    embeddingProvider: Type.Optional(
      Type.String({
        description: `Embedding provider (default openai; with 'baseUrl' any OpenAI-compatible server): ${EMBEDDING_PROVIDERS.join(', ')}.`,
      }),
    ),
    embeddingParameters: Type.Optional(
      stringMap(
        'Provider parameters as text: model, apiKey, baseUrl, endpoint/deploymentName/apiVersion (azure-openai), project/location (vertex), region/accessKeyId/secretAccessKey (bedrock), dimensions. ${vault:NAME} is read from the secrets vault when used.',
      ),
    ),
    storeType: Type.Optional(
      stringEnum(
        STORE_TYPES,
        "Where vectors are kept: 'in-memory' (the original's default) is the service's own store here (PostgreSQL or the embedded store), so chunks persist and every instance sees them.",
      ),
    ),
    storeParameters: Type.Optional(
      Type.Object({}, { additionalProperties: false, description: 'No parameters: the service’s store is used.' }),
    ),
    chunkStrategy: Type.Optional(
      stringEnum(
        CHUNK_STRATEGIES,
        "How documents are split: 'recursive' (paragraphs, then sentences, then words, to fit chunkSize; default), 'paragraph', 'sentence' (whole paragraphs/sentences packed up to chunkSize characters), 'token' (chunkSize and chunkOverlap count tokens: words and punctuation).",
      ),
    ),
    chunkSize: Type.Optional(
      Type.Integer({ minimum: 16, maximum: 100_000, description: 'Chunk size in characters (tokens for token).' }),
    ),
    chunkOverlap: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Overlap of neighbouring chunks, smaller than chunkSize (default 64).' }),
    ),
    maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Top k (default 5).' })),
    minScore: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Least score a chunk needs to be retrieved (default 0.6).' }),
    ),
    hybridSearch: Type.Optional(
      Type.Boolean({
        description:
          'Rank by vector similarity and keyword match (BM25) together (default false: vector similarity only).',
      }),
    ),
    keywordWeight: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: "Hybrid search: the keyword score's share of the score (default 0.3).",
      }),
    ),
  },
  {
    title: 'RagConfiguration',
    description: 'A knowledge base: embedding model, chunking and retrieval settings.',
  },
);
export type RagConfiguration = Static<typeof RagConfigurationSchema>;

function checkSemantics(body: unknown): SemanticProblem[] {
  if (!isRecord(body)) return [];
  const config = body as RagConfiguration;
  const problems: SemanticProblem[] = [];
  const providerProblem = embeddingProviderProblem(
    config.embeddingProvider ?? RAG_DEFAULTS.embeddingProvider,
    config.embeddingParameters ?? {},
  );
  if (providerProblem) problems.push({ path: '$.embeddingProvider', message: providerProblem });
  const size = config.chunkSize ?? RAG_DEFAULTS.chunkSize;
  const overlap = config.chunkOverlap ?? RAG_DEFAULTS.chunkOverlap;
  if (overlap >= size)
    problems.push({
      path: '$.chunkOverlap',
      message: `chunkOverlap (${overlap}) must be smaller than chunkSize (${size}).`,
    });
  const dimensions = config.embeddingParameters?.dimensions;
  if (dimensions !== undefined && !/^[1-9]\d{0,4}$/.test(dimensions))
    problems.push({
      path: '$.embeddingParameters.dimensions',
      message: `dimensions must be a whole number of dimensions, not '${dimensions}'.`,
    });
  return problems;
}

export const ragKind: ResourceKindDefinition = {
  ...kindNamed('rag'),
  schema: RagConfigurationSchema,
  renameAliases: aliasRenamer({}, RagConfigurationSchema),
  checkSemantics,
};
