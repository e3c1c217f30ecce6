import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createResource, idFromLocation } from './support/agents.ts';
import type { RunningServer } from '../src/server.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-llm/index.ts';
import { client } from './support/http.ts';
import { startInstances, type Instances } from './support/instances.ts';
import { startServiceProcess, type ServiceProcess } from './support/process.ts';
import { ingestionDone, ingestJson, knowledgeBaseBody } from './support/knowledge.ts';
import { pdfWithText } from './support/pdf.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * Knowledge bases through the REST API on both stores, against a loopback embedding server speaking the OpenAI
 * embeddings wire format: the versioned resource at /ragstore/rags, ingestion of text, Markdown, HTML and PDF
 * (raw, JSON, multipart), its status, the documents, replacement, deletion and search.
 */

type Api = ReturnType<typeof client>;

const HTML = `<!doctype html><html><head><style>p { color: red }</style><script>var hidden = 1;</script></head>
<body><nav>Home | About</nav><h1>Shipping</h1><p>Parcels ship from the Berlin warehouse within two days.</p></body></html>`;

for (const store of storeTypes) {
  describe(`knowledge bases (${store})`, () => {
    let embeddings: FakeEmbeddings;
    before(async () => {
      embeddings = await startFakeEmbeddings();
    });
    after(() => embeddings.close());
    const block = serverOfBlock(store);
    const { api } = block;

    it('is a versioned store with descriptors, versions, duplicate, JSON schema and the resource kind', async () => {
      const location = await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings));
      assert.match(location, /^svc:\/\/ai\.svc\.rag\/ragstore\/rags\/[0-9a-f]{24}\?version=1$/);
      const id = idFromLocation(location);
      const read = await api.get(`/ragstore/rags/${id}?version=1`);
      assert.equal(read.status, 200);
      assert.equal(read.json.name, 'handbook');
      const updated = await api.put(`/ragstore/rags/${id}?version=1`, {
        json: knowledgeBaseBody(embeddings, { maxResults: 4 }),
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal((await api.get(`/ragstore/rags/${id}/currentversion`)).text, '2');
      const descriptors = await api.get('/ragstore/rags/descriptors');
      assert.equal(descriptors.status, 200);
      assert.ok(descriptors.json.some((d: { resource: string }) => d.resource.includes(id)));
      const copy = await api.post(`/ragstore/rags/${id}?version=2`);
      assert.equal(copy.status, 201, copy.text);
      assert.notEqual(idFromLocation(copy.headers.get('location')), id);
      const schema = await api.get('/ragstore/rags/jsonSchema');
      assert.equal(schema.status, 200);
      assert.ok(schema.json.properties.chunkStrategy);
      // The original writes an empty `sources` and (older releases) unread injection settings: accepted, dropped.
      const original = await createResource(api, '/ragstore/rags', {
        ...knowledgeBaseBody(embeddings),
        storeType: 'in-memory',
        storeParameters: {},
        sources: [],
      });
      assert.equal((await api.get(`/ragstore/rags/${idFromLocation(original)}?version=1`)).json.sources, undefined);
      const llm = await createResource(api, '/langchainstore/langchains', {
        tasks: [
          {
            type: 'openai',
            knowledgeBases: [{ name: 'handbook', injectionStrategy: 'system', contextTemplate: 'x' }],
            ragDefaults: { maxResults: 2, injectionStrategy: 'system' },
          },
        ],
      });
      const task = (await api.get(`/langchainstore/langchains/${idFromLocation(llm)}?version=1`)).json.tasks[0];
      assert.deepEqual(task.knowledgeBases, [{ name: 'handbook' }]);
      assert.deepEqual(task.ragDefaults, { maxResults: 2 });
      const kinds = await api.get('/resourcekinds');
      assert.ok(kinds.json.some((kind: { storePath: string }) => kind.storePath === '/ragstore/rags'));
    });

    it('refuses what it cannot do with a 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ embeddingProvider: 'cohere' }, /cohere.*not available/],
        [{ embeddingProvider: 'word2vec' }, /Unknown embedding provider 'word2vec'/],
        [{ chunkStrategy: 'semantic' }, /chunkStrategy/],
        [{ chunkOverlap: 300 }, /chunkOverlap \(300\) must be smaller than chunkSize \(200\)/],
        [{ storeType: 'qdrant' }, /storeType/],
        [{ sources: [{ name: 'site', type: 'web' }] }, /'sources'.*ingestion sources/],
        [{ minScore: 2 }, /minScore/],
        [
          { embeddingProvider: 'azure-openai', embeddingParameters: { apiKey: 'k' } },
          /'endpoint' or 'baseUrl' or 'resourceName'/,
        ],
      ];
      for (const [change, message] of cases) {
        const answer = await api.post('/ragstore/rags', { json: knowledgeBaseBody(embeddings, change) });
        assert.equal(answer.status, 400, JSON.stringify(change));
        assert.match(answer.json.detail, message);
      }
    });

    it('ingests text, Markdown, HTML and PDF, lists the documents and finds the right chunk with its source', async () => {
      const id = idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings)));
      const raw = await api.post(`/ragstore/rags/${id}/ingest?documentName=warranty.txt`, {
        body: 'The warranty lasts 24 months and covers parts and labour.',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(raw.status, 202, raw.text);
      assert.equal(raw.json.status, 'pending');
      assert.equal(raw.json.kbId, id);
      assert.equal((await ingestionDone(api, id, raw.json.ingestionId)).status, 'completed');

      const form = new FormData();
      form.append('files', new Blob([HTML], { type: 'text/html' }), 'shipping.html');
      form.append(
        'files',
        new Blob([pdfWithText(['Returns are accepted within 30 days of delivery.'])]),
        'returns.pdf',
      );
      const multipart = await fetch(`${block.server.url}/ragstore/rags/${id}/ingest`, { method: 'POST', body: form });
      assert.equal(multipart.status, 202);
      const status = await ingestionDone(api, id, ((await multipart.json()) as { ingestionId: string }).ingestionId);
      assert.equal(status.status, 'completed', JSON.stringify(status));
      assert.deepEqual(
        status.documents.map((d: { name: string; status: string }) => [d.name, d.status]),
        [
          ['shipping.html', 'completed'],
          ['returns.pdf', 'completed'],
        ],
      );

      const markdown = await ingestJson(api, id, [
        { name: 'support.md', content: '# Support\n\nSupport answers by email on weekdays.' },
      ]);
      assert.equal(markdown.status, 'completed');

      const documents = await api.get(`/ragstore/rags/${id}/documents`);
      assert.equal(documents.status, 200);
      assert.deepEqual(
        documents.json.map((d: { name: string; contentType: string }) => [d.name, d.contentType]),
        [
          ['returns.pdf', 'application/pdf'],
          ['shipping.html', 'text/html'],
          ['support.md', 'text/markdown'],
          ['warranty.txt', 'text/plain'],
        ],
      );

      const search = async (query: string) => {
        const answer = await api.post(`/ragstore/rags/${id}/search`, { json: { query } });
        assert.equal(answer.status, 200, answer.text);
        return answer.json.results as Array<{ documentName: string; text: string; score: number }>;
      };
      const warranty = await search('how long does the warranty last');
      assert.equal(warranty[0]?.documentName, 'warranty.txt');
      assert.match(warranty[0]!.text, /24 months/);
      assert.ok(warranty[0]!.score > 0.55 && warranty[0]!.score <= 1);
      assert.equal((await search('returns accepted within days'))[0]?.documentName, 'returns.pdf');
      const shipping = (await search('which warehouse do parcels ship from'))[0]!;
      assert.equal(shipping.documentName, 'shipping.html');
      assert.doesNotMatch(shipping.text, /hidden|color|<p>/);
      assert.deepEqual(
        embeddings.requests.map((request) => request.headers.authorization),
        embeddings.requests.map(() => 'Bearer sk-embed-test'),
      );
    });

    it('embeds with Ollama too (its /api/embed wire format)', async () => {
      const id = idFromLocation(
        await createResource(
          api,
          '/ragstore/rags',
          knowledgeBaseBody(embeddings, {
            embeddingProvider: 'ollama',
            embeddingParameters: { model: 'nomic-embed-text', baseUrl: embeddings.url },
          }),
        ),
      );
      embeddings.requests.length = 0;
      const done = await ingestJson(api, id, [{ name: 'faq.md', content: 'Deliveries arrive within three days.' }]);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const results = (await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'when do deliveries arrive' } }))
        .json.results;
      assert.equal(results[0]?.documentName, 'faq.md');
      assert.deepEqual(
        embeddings.requests.map((request) => [request.path, request.model]),
        [
          ['/api/embed', 'nomic-embed-text'],
          ['/api/embed', 'nomic-embed-text'],
        ],
      );
    });

    it('replaces a re-ingested document, deletes documents with their chunks, and fails a bad document alone', async () => {
      const id = idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings)));
      await ingestJson(api, id, [{ name: 'prices.md', content: 'The basic plan costs 10 euros a month.' }]);
      await ingestJson(api, id, [{ name: 'prices.md', content: 'The basic plan costs 12 euros a month.' }]);
      const documents = (await api.get(`/ragstore/rags/${id}/documents`)).json;
      assert.equal(documents.length, 1);
      const results = (
        await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'basic plan costs', minScore: 0 } })
      ).json.results;
      assert.deepEqual(
        results.map((r: { text: string }) => r.text),
        ['The basic plan costs 12 euros a month.'],
      );

      const mixed = await ingestJson(api, id, [
        { name: 'good.txt', content: 'Opening hours are nine to five.' },
        { name: 'broken.pdf', contentBase64: Buffer.from('not a pdf at all').toString('base64') },
        { name: 'empty.html', content: '<html><body>   </body></html>' },
      ]);
      assert.equal(mixed.status, 'completed_with_errors');
      const byName = Object.fromEntries(mixed.documents.map((d: { name: string }) => [d.name, d]));
      assert.equal(byName['good.txt'].status, 'completed');
      assert.equal(byName['broken.pdf'].status, 'failed');
      assert.match(byName['broken.pdf'].error, /not a readable PDF/);
      assert.match(byName['empty.html'].error, /empty/);

      embeddings.failOn.add('unlucky');
      const failed = await ingestJson(api, id, [{ name: 'unlucky.txt', content: 'an unlucky document' }]);
      const refusedSearch = await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'unlucky' } });
      assert.equal(refusedSearch.status, 503, refusedSearch.text);
      assert.match(refusedSearch.json.detail, /embedding model 'text-embedding-3-small' failed/);
      assert.doesNotMatch(refusedSearch.text, /sk-embed-test/);
      embeddings.failOn.clear();
      assert.equal(failed.status, 'failed');
      assert.match(failed.documents[0].error, /The openai embedding model 'text-embedding-3-small' failed/);
      assert.doesNotMatch(JSON.stringify(failed), /sk-embed-test/);

      const prices = documents[0];
      const deleted = await api.delete(`/ragstore/rags/${id}/documents/${prices.id}`);
      assert.equal(deleted.status, 204);
      assert.equal((await api.delete(`/ragstore/rags/${id}/documents/${prices.id}`)).status, 404);
      const after = (
        await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'basic plan costs', minScore: 0 } })
      ).json.results;
      assert.ok(after.every((r: { documentName: string }) => r.documentName !== 'prices.md'));
      assert.deepEqual(
        (await api.get(`/ragstore/rags/${id}/documents`)).json.map((d: { name: string }) => d.name),
        ['good.txt'],
      );

      const body = knowledgeBaseBody(embeddings);
      const resized = await api.put(`/ragstore/rags/${id}?version=1`, {
        json: { ...body, embeddingParameters: { ...body.embeddingParameters, dimensions: '32' } },
      });
      assert.equal(resized.status, 200, resized.text);
      const mismatch = await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'opening hours' } });
      assert.equal(mismatch.status, 409, mismatch.text);
      assert.match(mismatch.json.detail, /chunks have 64 dimensions, but its embedding model now answers 32/);

      const purged = await api.delete(`/ragstore/rags/${id}?permanent=true`);
      assert.equal(purged.status, 200, purged.text);
      assert.equal((await api.get(`/ragstore/rags/${id}/documents`)).status, 404);
      const kept = await ingestJson(
        api,
        idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings))),
        [{ name: 'other.txt', content: 'Another knowledge base keeps its own documents.' }],
      );
      assert.equal(kept.status, 'completed');
    });

    it('answers bad uploads with 4xx problems and keeps what was there', async () => {
      const id = idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings)));
      const unknownType = await api.post(`/ragstore/rags/${id}/ingest`, {
        body: 'x',
        headers: { 'content-type': 'image/png' },
      });
      assert.equal(unknownType.status, 415);
      const noFormat = await api.post(`/ragstore/rags/${id}/ingest?documentName=data.bin`, {
        body: 'x',
        headers: { 'content-type': 'application/octet-stream' },
      });
      assert.equal(noFormat.status, 400);
      assert.match(noFormat.json.detail, /data\.bin/);
      const unknownField = await api.post(`/ragstore/rags/${id}/ingest`, {
        json: { documents: [{ name: 'a.txt', content: 'a', colour: 'red' }] },
      });
      assert.equal(unknownField.status, 400);
      assert.match(unknownField.text, /colour/);
      const both = await api.post(`/ragstore/rags/${id}/ingest`, {
        json: { documents: [{ name: 'a.txt', content: 'a', contentBase64: 'YQ==' }] },
      });
      assert.equal(both.status, 400);
      const twice = await api.post(`/ragstore/rags/${id}/ingest`, {
        json: {
          documents: [
            { name: 'a.txt', content: 'a' },
            { name: 'a.txt', content: 'b' },
          ],
        },
      });
      assert.equal(twice.status, 400);
      assert.equal(
        (await api.post(`/ragstore/rags/${id}/ingest?replace=false`, { json: { documents: [] } })).status,
        400,
      );
      assert.equal(
        (await api.post('/ragstore/rags/0123456789abcdef01234567/ingest', { json: { documents: [] } })).status,
        404,
      );
      assert.equal((await api.get(`/ragstore/rags/${id}/ingestion/nope/status`)).status, 404);
      assert.equal((await api.post(`/ragstore/rags/${id}/search`, { json: {} })).status, 400);
      assert.deepEqual((await api.get(`/ragstore/rags/${id}/documents`)).json, []);
    });
  });
}

describe('knowledge-base upload limits', () => {
  let embeddings: FakeEmbeddings;
  before(async () => {
    embeddings = await startFakeEmbeddings();
  });
  after(() => embeddings.close());
  const block = serverOfBlock('sqlite', {
    'svc.rag.max-document-bytes': 1000,
    'svc.rag.max-documents': 2,
    'svc.rag.max-upload-bytes': 1500,
  });
  const { api } = block;

  it('answers 413 for a document or a batch too large, and ingests nothing of it', async () => {
    const id = idFromLocation(await createResource(api, '/ragstore/rags', knowledgeBaseBody(embeddings)));
    const big = 'word '.repeat(400);
    const raw = await api.post(`/ragstore/rags/${id}/ingest?documentName=big.txt`, {
      body: big,
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(raw.status, 413);
    const form = new FormData();
    form.append('files', new Blob([big], { type: 'text/plain' }), 'big.txt');
    const multipart = await fetch(`${block.server.url}/ragstore/rags/${id}/ingest`, { method: 'POST', body: form });
    assert.equal(multipart.status, 413);
    assert.match(((await multipart.json()) as { detail: string }).detail, /svc\.rag\.max-document-bytes/);
    const together = new FormData();
    for (const name of ['a.txt', 'b.txt'])
      together.append('files', new Blob(['word '.repeat(160)], { type: 'text/plain' }), name);
    const tooMuch = await fetch(`${block.server.url}/ragstore/rags/${id}/ingest`, { method: 'POST', body: together });
    assert.equal(tooMuch.status, 413);
    assert.match(((await tooMuch.json()) as { detail: string }).detail, /svc\.rag\.max-upload-bytes/);
    const many = new FormData();
    for (const name of ['a.txt', 'b.txt', 'c.txt'])
      many.append('files', new Blob(['small'], { type: 'text/plain' }), name);
    const tooMany = await fetch(`${block.server.url}/ragstore/rags/${id}/ingest`, { method: 'POST', body: many });
    assert.equal(tooMany.status, 413);
    assert.deepEqual((await api.get(`/ragstore/rags/${id}/documents`)).json, []);
  });
});

describe('several instances share knowledge bases (postgres), keys from the vault', () => {
  let embeddings: FakeEmbeddings;
  let instances: Instances;
  let servers: RunningServer[] = [];
  before(async () => {
    embeddings = await startFakeEmbeddings();
    instances = await startInstances(2, { 'svc.vault.master-key': 'knowledge-test-master-key' });
    servers = instances.servers;
  });
  after(async () => {
    await instances?.close();
    await embeddings?.close();
  });

  it('ingests on one instance, searches and deletes on the other, with the key read from the vault', async () => {
    const [one, two] = servers.map((server) => client(() => server.url)) as [Api, Api];
    const secret = await one.put('/secretstore/secrets/default/EMBED_KEY', {
      json: { value: 'sk-from-the-vault-42', description: 'embeddings' },
    });
    assert.ok(secret.status < 300, secret.text);
    const body = knowledgeBaseBody(embeddings);
    const location = await createResource(one, '/ragstore/rags', {
      ...body,
      embeddingParameters: { ...body.embeddingParameters, apiKey: '${vault:EMBED_KEY}' },
    });
    const id = idFromLocation(location);
    embeddings.requests.length = 0;
    await ingestJson(one, id, [{ name: 'hours.txt', content: 'The shop opens at nine and closes at five.' }]);
    assert.equal(embeddings.requests[0]?.headers.authorization, 'Bearer sk-from-the-vault-42');
    assert.doesNotMatch((await one.get(`/ragstore/rags/${id}?version=1`)).text, /sk-from-the-vault/);

    const search = async (api: Api) =>
      (await api.post(`/ragstore/rags/${id}/search`, { json: { query: 'when does the shop open', minScore: 0 } })).json
        .results as Array<{ documentName: string }>;
    assert.deepEqual(
      (await search(two)).map((hit) => hit.documentName),
      ['hours.txt'],
    );
    const [document] = (await two.get(`/ragstore/rags/${id}/documents`)).json;
    assert.equal((await two.delete(`/ragstore/rags/${id}/documents/${document.id}`)).status, 204);
    assert.deepEqual(await search(one), [], 'the first instance sees the deletion made on the second');
    await ingestJson(two, id, [{ name: 'hours.txt', content: 'The shop opens at ten now.' }]);
    assert.deepEqual(
      (await search(one)).map((hit) => hit.documentName),
      ['hours.txt'],
    );

    const rows = async (table: string) => {
      const db = new pg.Client({ connectionString: instances.databaseUrl });
      await db.connect();
      try {
        return Number((await db.query(`SELECT count(*) AS n FROM ${table} WHERE kb_id = $1`, [id])).rows[0].n);
      } finally {
        await db.end();
      }
    };
    assert.equal(await rows('rag_chunks'), 1);
    assert.equal((await one.delete(`/ragstore/rags/${id}?permanent=true`)).status, 200);
    for (const table of ['rag_chunks', 'rag_documents', 'rag_ingestions']) assert.equal(await rows(table), 0, table);
  });
});

describe('an ingestion whose instance dies', () => {
  let embeddings: FakeEmbeddings;
  let instances: Instances;
  let crashing: ServiceProcess;
  let survivor: RunningServer;
  const heartbeat = 500;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    instances = await startInstances(1, { 'svc.rag.ingestion-heartbeat-millis': heartbeat });
    [survivor] = instances.servers as [RunningServer];
    crashing = startServiceProcess({
      SVC_HTTP_PORT: '0',
      SVC_DATASTORE_TYPE: 'postgres',
      SVC_DATASTORE_POSTGRES_URL: instances.databaseUrl,
      SVC_RAG_INGESTION_HEARTBEAT_MILLIS: String(heartbeat),
    });
  });
  after(async () => {
    await crashing?.stop('SIGKILL');
    await instances?.close();
    await embeddings?.close();
  });

  it('is reported failed for what it did not finish once its heartbeat stops, on another instance', async () => {
    const other = client(() => survivor.url);
    const dying = client(await crashing.listening().then((url) => () => url));
    const id = idFromLocation(await createResource(other, '/ragstore/rags', knowledgeBaseBody(embeddings)));
    embeddings.hangOn.add('stall');
    const started = await dying.post(`/ragstore/rags/${id}/ingest`, {
      json: {
        documents: [
          { name: 'first.txt', content: 'This one is embedded.' },
          { name: 'stuck.txt', content: 'This one makes the embedding call stall.' },
        ],
      },
    });
    assert.equal(started.status, 202, started.text);
    const statusPath = `/ragstore/rags/${id}/ingestion/${started.json.ingestionId}/status`;
    const status = async () => (await other.get(statusPath)).json;
    let seen = await status();
    while (seen.documents[1].status !== 'processing') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = await status();
    }
    assert.equal(seen.status, 'processing');
    assert.equal(seen.documents[0].status, 'completed');

    await crashing.stop('SIGKILL');
    while (seen.status === 'processing') {
      await new Promise((resolve) => setTimeout(resolve, heartbeat / 2));
      seen = await status();
    }
    assert.equal(seen.status, 'completed_with_errors');
    assert.equal(seen.documents[0].status, 'completed');
    assert.equal(seen.documents[1].status, 'failed');
    assert.match(seen.documents[1].error, /stopped before it finished/);
    assert.deepEqual(await status(), seen, 'the verdict is stored');
    assert.deepEqual(
      (await other.get(`/ragstore/rags/${id}/documents`)).json.map((d: { name: string }) => d.name),
      ['first.txt'],
    );
  });
});
