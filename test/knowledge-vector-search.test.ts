import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createResource, idFromLocation } from './support/agents.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-llm/index.ts';
import { client } from './support/http.ts';
import { startInstances, type Instances } from './support/instances.ts';
import { ingestJson, knowledgeBaseBody } from './support/knowledge.ts';
import { adminUrl } from './support/postgres.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * How vectors are searched. At start the service asks the store for PostgreSQL's pgvector extension and reports
 * what it found and why it searches in process. Knowledge bases large enough for the approximate (HNSW) index (the threshold lowered to a few dozen chunks):
 * searches answer what exact search answered, documents written, replaced or deleted after the index was built are
 * seen at once, the index is rebuilt once enough changed, and hybrid ranking still finds keyword matches. On both
 * stores, and across two instances sharing PostgreSQL.
 */

type Api = ReturnType<typeof client>;

const MIN_CHUNKS = 40;
const TOPICS = ['harbour', 'orchard', 'glacier', 'library', 'volcano', 'vineyard'];

/** A document of one sentence per line, each its own chunk (sentence strategy, small chunks). */
function documentAbout(topic: string, sentences: number): string {
  return Array.from(
    { length: sentences },
    (_, i) => `The ${topic} note ${i} mentions ${topic} item${i} and shelf${i % 7}.`,
  ).join('\n\n');
}

async function indexState(api: Api, id: string) {
  const answer = await api.get(`/ragstore/rags/${id}/index`);
  assert.equal(answer.status, 200, answer.text);
  return answer.json as { search: string; building: boolean; chunks: number; approximateLag: number };
}

/** Polls the index state until the approximate index is in use and nothing is being built. */
async function approximateReady(api: Api, id: string) {
  for (let attempt = 0; attempt < 1500; attempt++) {
    const state = await indexState(api, id);
    if (state.search === 'approximate' && !state.building) return state;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail('the approximate index was not built');
}

async function search(api: Api, id: string, query: string, extra: Record<string, unknown> = {}) {
  const answer = await api.post(`/ragstore/rags/${id}/search`, {
    json: { query, minScore: 0, maxResults: 5, ...extra },
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.json.results as Array<{ documentName: string; text: string; score: number }>;
}

const body = (embeddings: FakeEmbeddings, extra: Record<string, unknown> = {}) =>
  knowledgeBaseBody(embeddings, { chunkStrategy: 'sentence', chunkSize: 80, chunkOverlap: 0, ...extra });

for (const store of storeTypes) {
  describe(`vector search (${store})`, () => {
    let embeddings: FakeEmbeddings;
    before(async () => {
      embeddings = await startFakeEmbeddings();
    });
    after(() => embeddings.close());
    const block = serverOfBlock(store, { 'svc.rag.approximate-search-min-chunks': MIN_CHUNKS });
    const { api } = block;

    it('reports how it searches vectors and why: the pgvector extension of this PostgreSQL server, or none', async () => {
      const answer = await api.get('/ragstore/vectorsearch');
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.search, 'in-process');
      assert.equal(answer.json.approximateMinChunks, MIN_CHUNKS);
      if (store === 'sqlite') {
        assert.equal(answer.json.pgvector, 'none');
        assert.match(answer.json.reason, /embedded store has no vector extension/);
      } else {
        // What the server's own catalogue says (on these machines: no pgvector package, so absent).
        const db = new pg.Client({ connectionString: adminUrl });
        await db.connect();
        const { rows } = await db
          .query("SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'")
          .finally(() => db.end());
        const expected = rows.length === 0 ? 'absent' : rows[0].installed_version ? 'installed' : 'available';
        assert.equal(answer.json.pgvector, expected);
        if (expected === 'absent') assert.match(answer.json.reason, /PostgreSQL offers no 'vector' extension/);
      }
      const logged = block.server.logLines
        .map((line) => JSON.parse(line) as { msg: string; vectorSearch?: { pgvector: string } })
        .find((line) => line.msg.startsWith('knowledge-base vector search:'));
      assert.equal(logged?.vectorSearch?.pgvector, answer.json.pgvector);
      assert.match(logged!.msg, /searched in process/);
    });

    it('answers as exact search did, sees later changes at once, and is rebuilt when enough changed', async () => {
      const id = idFromLocation(await createResource(api, '/ragstore/rags', body(embeddings)));
      const small = await ingestJson(api, id, [{ name: 'harbour.md', content: documentAbout('harbour', 10) }]);
      assert.equal(small.status, 'completed', JSON.stringify(small));
      const below = await indexState(api, id);
      assert.deepEqual([below.search, below.building, below.chunks], ['exact', false, 10]);

      const done = await ingestJson(
        api,
        id,
        TOPICS.slice(1).map((topic) => ({ name: `${topic}.md`, content: documentAbout(topic, 10) })),
      );
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const queries = TOPICS.map((topic, i) => `${topic} item${i} shelf${i}`);
      // Searched exactly while the approximate index is built (the first search starts the build).
      const exact = [];
      for (const query of queries) exact.push(await search(api, id, query));
      const ready = await approximateReady(api, id);
      assert.equal(ready.chunks, 60);
      assert.equal(ready.approximateLag, 0);
      for (const [i, query] of queries.entries()) assert.deepEqual(await search(api, id, query), exact[i], query);

      // A new document, a replaced one and a deleted one are seen by the next search.
      await ingestJson(api, id, [{ name: 'lighthouse.md', content: 'The lighthouse keeper polishes the lamp.' }]);
      assert.equal((await search(api, id, 'lighthouse keeper lamp'))[0]?.documentName, 'lighthouse.md');
      await ingestJson(api, id, [{ name: 'glacier.md', content: 'The glacier melted into a turquoise lake.' }]);
      const glacier = await search(api, id, 'glacier item3 shelf3 turquoise lake');
      assert.equal(glacier[0]?.text, 'The glacier melted into a turquoise lake.');
      assert.ok(!glacier.some((hit) => hit.text.includes('glacier note')), 'replaced chunks are never answered');
      const documents = (await api.get(`/ragstore/rags/${id}/documents`)).json as Array<{ id: string; name: string }>;
      const orchard = documents.find((document) => document.name === 'orchard.md')!;
      assert.equal((await api.delete(`/ragstore/rags/${id}/documents/${orchard.id}`)).status, 204);
      assert.ok(!(await search(api, id, 'orchard item1 shelf1')).some((hit) => hit.documentName === 'orchard.md'));
      // 1 new + 10 replaced + 10 deleted chunks of 60 is past the 10% that starts a rebuild.
      const rebuilt = await approximateReady(api, id);
      assert.equal(rebuilt.approximateLag, 0);
      assert.equal(rebuilt.chunks, 42);
      assert.equal((await search(api, id, 'lighthouse keeper lamp'))[0]?.documentName, 'lighthouse.md');
    });

    it('ranks keyword matches in hybrid search through the approximate index', async () => {
      const id = idFromLocation(
        await createResource(api, '/ragstore/rags', body(embeddings, { hybridSearch: true, keywordWeight: 0.6 })),
      );
      await ingestJson(
        api,
        id,
        TOPICS.map((topic) => ({ name: `${topic}.md`, content: documentAbout(topic, 10) })),
      );
      await search(api, id, 'warm up');
      await approximateReady(api, id);
      const hits = await search(api, id, 'vineyard item7', { maxResults: 1 });
      assert.equal(hits[0]?.text, 'The vineyard note 7 mentions vineyard item7 and shelf0.');
    });

    it('answers 404 for the index of an unknown knowledge base', async () => {
      const answer = await api.get('/ragstore/rags/000000000000000000000000/index');
      assert.equal(answer.status, 404, answer.text);
      assert.equal(answer.json.status, 404);
    });
  });
}

describe('approximate search across two instances on one PostgreSQL', () => {
  let embeddings: FakeEmbeddings;
  let instances: Instances;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    instances = await startInstances(2, { 'svc.rag.approximate-search-min-chunks': MIN_CHUNKS });
  });
  after(async () => {
    await instances?.close();
    await embeddings?.close();
  });

  it('an instance searching through its approximate index sees what the other wrote', async () => {
    const [one, two] = instances.servers.map((server) => client(() => server.url)) as [Api, Api];
    const id = idFromLocation(await createResource(one, '/ragstore/rags', body(embeddings)));
    await ingestJson(
      one,
      id,
      TOPICS.map((topic) => ({ name: `${topic}.md`, content: documentAbout(topic, 10) })),
    );
    await search(two, id, 'warm up');
    await approximateReady(two, id);
    await ingestJson(one, id, [{ name: 'volcano.md', content: 'The volcano sleeps under fresh snow.' }]);
    const hits = await search(two, id, 'volcano item4 shelf4 sleeps snow');
    assert.equal(hits[0]?.text, 'The volcano sleeps under fresh snow.');
    assert.ok(!hits.some((hit) => hit.text.includes('volcano note')));
  });
});
