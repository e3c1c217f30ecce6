import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeEmbeddings } from './fake-llm/index.ts';
import type { client } from './http.ts';

/** Knowledge bases in black-box tests: a body embedding through the fake embedding server, ingestion helpers. */

type Api = ReturnType<typeof client>;

export function knowledgeBaseBody(embeddings: FakeEmbeddings, extra: Record<string, unknown> = {}) {
  return {
    name: 'handbook',
    embeddingProvider: 'openai',
    embeddingParameters: { model: 'text-embedding-3-small', apiKey: 'sk-embed-test', baseUrl: `${embeddings.url}/v1` },
    chunkSize: 200,
    chunkOverlap: 0,
    maxResults: 3,
    minScore: 0.55,
    ...extra,
  };
}

/** Polls the ingestion until it is no longer pending or processing; answers its last status. */
export async function ingestionDone(api: Api, kbId: string, ingestionId: string): Promise<any> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const answer = await api.get(`/ragstore/rags/${kbId}/ingestion/${ingestionId}/status`);
    assert.equal(answer.status, 200, answer.text);
    if (answer.json.status !== 'pending' && answer.json.status !== 'processing') return answer.json;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail('the ingestion did not finish');
}

export async function ingestJson(api: Api, kbId: string, documents: unknown[]): Promise<any> {
  const answer = await api.post(`/ragstore/rags/${kbId}/ingest`, { json: { documents } });
  assert.equal(answer.status, 202, answer.text);
  return ingestionDone(api, kbId, answer.json.ingestionId);
}

export interface SearchApi {
  readonly url: string;
  /** The `q` of every request, in order. */
  readonly queries: string[];
  close(): Promise<void>;
}

/** A loopback search API for httpCallRag: `GET /search?q=...` answers the query in a JSON hit list. */
export async function startSearchApi(): Promise<SearchApi> {
  const queries: string[] = [];
  const server: Server = createServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    queries.push(query);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ hits: [`Opening hours for "${query}": nine to five.`] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
