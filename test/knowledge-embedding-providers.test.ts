import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createResource, idFromLocation } from './support/agents.ts';
import { SIGV4_AUTHORIZATION, startFakeEmbeddings, type FakeEmbeddings } from './support/fake-llm/index.ts';
import type { EmbeddingRequest } from './support/fake-llm/embeddings.ts';
import { ingestJson } from './support/knowledge.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * Every embedding provider a knowledge base names, through the AI SDK's provider packages against a loopback
 * server that speaks that provider's documented embeddings wire format: what the provider's API receives (path,
 * model, texts, dimensions, credentials read from the vault) and that the answer makes a searchable knowledge base.
 * One store: the providers do not touch the store (both stores run the other knowledge-base tests).
 */

const SECRET = 'provider-secret-0042';
const DOCUMENT = 'Parcels ship from the Berlin warehouse within two days.';
const QUERY = 'where do parcels ship from';

interface ProviderCase {
  readonly name: string;
  readonly provider: string;
  readonly parameters: (url: string) => Record<string, string>;
  /** What each request (ingestion, then the query) must look like, besides its texts. */
  readonly expect: (request: EmbeddingRequest, purpose: 'document' | 'query') => void;
}

const vaultKey = '${vault:PROVIDER_KEY}';

const cases: readonly ProviderCase[] = [
  {
    name: 'OpenAI',
    provider: 'openai',
    parameters: (url) => ({
      model: 'text-embedding-3-large',
      apiKey: vaultKey,
      baseUrl: `${url}/v1`,
      dimensions: '32',
    }),
    expect: (request) => {
      assert.equal(request.path, '/v1/embeddings');
      assert.equal(request.model, 'text-embedding-3-large');
      assert.equal(request.body.dimensions, 32);
      assert.equal(request.body.encoding_format, 'float');
      assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    },
  },
  {
    name: 'an OpenAI-compatible server',
    provider: 'openai',
    parameters: (url) => ({ model: 'bge-small-en', apiKey: vaultKey, baseUrl: `${url}/compat/v1/` }),
    expect: (request) => {
      assert.equal(request.path, '/compat/v1/embeddings');
      assert.equal(request.model, 'bge-small-en');
      assert.equal(request.body.dimensions, undefined);
      assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    },
  },
  {
    name: 'Azure OpenAI',
    provider: 'azure-openai',
    parameters: (url) => ({
      endpoint: url,
      deploymentName: 'kb-embeddings',
      apiVersion: '2024-10-21',
      apiKey: vaultKey,
      dimensions: '48',
    }),
    expect: (request) => {
      assert.equal(request.path, '/openai/deployments/kb-embeddings/embeddings?api-version=2024-10-21');
      assert.equal(request.body.dimensions, 48);
      assert.equal(request.headers['api-key'], SECRET);
      assert.equal(request.headers.authorization, undefined);
    },
  },
  {
    name: 'Mistral',
    provider: 'mistral',
    parameters: (url) => ({ model: 'mistral-embed', apiKey: vaultKey, baseUrl: `${url}/v1` }),
    expect: (request) => {
      assert.equal(request.path, '/v1/embeddings');
      assert.equal(request.model, 'mistral-embed');
      assert.equal(request.body.encoding_format, 'float');
      assert.equal(request.body.output_dimension, undefined);
      assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    },
  },
  {
    name: 'Mistral with output dimensions (codestral-embed)',
    provider: 'mistral',
    parameters: (url) => ({ model: 'codestral-embed', apiKey: vaultKey, baseUrl: `${url}/v1`, dimensions: '256' }),
    expect: (request) => {
      assert.equal(request.path, '/v1/embeddings');
      assert.equal(request.body.output_dimension, 256);
    },
  },
  {
    name: 'Google Gemini',
    provider: 'gemini',
    parameters: (url) => ({
      model: 'gemini-embedding-001',
      apiKey: vaultKey,
      baseUrl: `${url}/v1beta`,
      dimensions: '96',
    }),
    expect: (request, purpose) => {
      // One text is sent to :embedContent, several to :batchEmbedContents; both carry the model and task type.
      const single = request.input.length === 1 && request.path.endsWith(':embedContent');
      assert.equal(
        request.path,
        `/v1beta/models/gemini-embedding-001:${single ? 'embedContent' : 'batchEmbedContents'}`,
      );
      const parts = single ? [request.body] : request.body.requests;
      for (const part of parts) {
        assert.equal(part.model, 'models/gemini-embedding-001');
        assert.equal(part.outputDimensionality, 96);
        assert.equal(part.taskType, purpose === 'document' ? 'RETRIEVAL_DOCUMENT' : 'RETRIEVAL_QUERY');
      }
      assert.equal(request.headers['x-goog-api-key'], SECRET);
    },
  },
  {
    name: 'Amazon Bedrock (Titan)',
    provider: 'bedrock',
    parameters: (url) => ({
      model: 'amazon.titan-embed-text-v2:0',
      region: 'eu-central-1',
      accessKeyId: 'AKIAEXAMPLEKEY000001',
      secretAccessKey: vaultKey,
      baseUrl: url,
      dimensions: '256',
    }),
    expect: (request) => {
      assert.equal(request.path, `/model/${encodeURIComponent('amazon.titan-embed-text-v2:0')}/invoke`);
      assert.equal(request.model, 'amazon.titan-embed-text-v2:0');
      assert.equal(typeof request.body.inputText, 'string');
      assert.equal(request.body.dimensions, 256);
      assert.match(String(request.headers.authorization), SIGV4_AUTHORIZATION);
      assert.match(String(request.headers.authorization), /Credential=AKIAEXAMPLEKEY000001\/\d{8}\/eu-central-1\//);
      assert.doesNotMatch(JSON.stringify(request.headers), new RegExp(SECRET));
    },
  },
  {
    name: 'Amazon Bedrock (Cohere embed)',
    provider: 'bedrock',
    parameters: (url) => ({
      model: 'cohere.embed-multilingual-v3',
      accessKeyId: 'AKIAEXAMPLEKEY000001',
      secretAccessKey: vaultKey,
      baseUrl: url,
    }),
    expect: (request, purpose) => {
      assert.equal(request.path, `/model/${encodeURIComponent('cohere.embed-multilingual-v3')}/invoke`);
      assert.ok(Array.isArray(request.body.texts));
      assert.equal(request.body.input_type, purpose === 'document' ? 'search_document' : 'search_query');
      // The original's default region.
      assert.match(
        String(request.headers.authorization),
        /Credential=AKIAEXAMPLEKEY000001\/\d{8}\/us-east-1\/bedrock\//,
      );
    },
  },
  {
    name: 'Ollama',
    provider: 'ollama',
    parameters: (url) => ({ model: 'nomic-embed-text', baseUrl: url, apiKey: vaultKey, dimensions: '16' }),
    expect: (request) => {
      assert.equal(request.path, '/api/embed');
      assert.equal(request.model, 'nomic-embed-text');
      assert.equal(request.body.dimensions, 16);
      assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    },
  },
];

describe('embedding providers, each against its own wire format', () => {
  let embeddings: FakeEmbeddings;
  before(async () => {
    embeddings = await startFakeEmbeddings();
  });
  after(() => embeddings.close());
  const { api } = serverOfBlock('sqlite', { 'svc.vault.master-key': 'embedding-providers-test-key' });

  before(async () => {
    const secret = await api.put('/secretstore/secrets/default/PROVIDER_KEY', { json: { value: SECRET } });
    assert.ok(secret.status < 300, secret.text);
  });

  for (const testCase of cases) {
    it(`embeds documents and queries with ${testCase.name}`, async () => {
      const location = await createResource(api, '/ragstore/rags', {
        name: 'providers',
        embeddingProvider: testCase.provider,
        embeddingParameters: testCase.parameters(embeddings.url),
        chunkStrategy: 'sentence',
        chunkSize: 60,
        chunkOverlap: 0,
        minScore: 0,
      });
      const id = idFromLocation(location);
      embeddings.requests.length = 0;
      const done = await ingestJson(api, id, [
        { name: 'shipping.md', content: `${DOCUMENT} Returns are free for thirty days. Gift cards never expire.` },
      ]);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const chunks = done.documents[0].chunks as number;
      assert.ok(chunks >= 2, 'the document is cut into several chunks');
      const ingestion = embeddings.requests.splice(0);
      assert.ok(ingestion.length > 0);
      for (const request of ingestion) testCase.expect(request, 'document');
      assert.deepEqual(
        ingestion.flatMap((request) => request.input).sort(),
        [DOCUMENT, 'Returns are free for thirty days. Gift cards never expire.'].sort(),
      );

      const search = await api.post(`/ragstore/rags/${id}/search`, { json: { query: QUERY } });
      assert.equal(search.status, 200, search.text);
      assert.equal(search.json.results[0]?.text, DOCUMENT);
      assert.equal(embeddings.requests.length, 1);
      testCase.expect(embeddings.requests[0]!, 'query');
      assert.deepEqual(embeddings.requests[0]!.input, [QUERY]);
      const expectedDimensions = testCase.parameters(embeddings.url).dimensions;
      if (expectedDimensions !== undefined)
        for (const request of [...ingestion, ...embeddings.requests])
          assert.equal(request.dimensions, Number(expectedDimensions));

      const read = await api.get(`/ragstore/rags/${id}?version=1`);
      assert.doesNotMatch(read.text, new RegExp(SECRET));
      assert.match(read.text, /\$\{vault:PROVIDER_KEY\}/);
    });
  }

  it('names the provider and model, never the key, when the provider refuses', async () => {
    const id = idFromLocation(
      await createResource(api, '/ragstore/rags', {
        name: 'refusing',
        embeddingProvider: 'gemini',
        embeddingParameters: { model: 'gemini-embedding-001', apiKey: vaultKey, baseUrl: `${embeddings.url}/v1beta` },
      }),
    );
    embeddings.failOn.add('forbidden');
    try {
      const done = await ingestJson(api, id, [{ name: 'bad.txt', content: 'a forbidden text' }]);
      assert.equal(done.status, 'failed');
      assert.match(
        done.documents[0].error,
        /gemini embedding model 'gemini-embedding-001' failed: scripted embedding refusal/,
      );
      assert.doesNotMatch(JSON.stringify(done), new RegExp(SECRET));
    } finally {
      embeddings.failOn.delete('forbidden');
    }
  });
});
