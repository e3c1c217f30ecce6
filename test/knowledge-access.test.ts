import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { idFromLocation } from './support/agents.ts';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-llm/index.ts';
import { knowledgeBaseBody } from './support/knowledge.ts';
import { startWorkspaceServer, type WorkspaceServer } from './support/workspaces.ts';

/**
 * Access to a knowledge base's documents with authentication and access levels on: reading and searching need USE
 * on the knowledge base, ingesting and deleting EDIT; a caller without any level gets 404, as for the configuration.
 */
describe('knowledge-base documents with access levels (sqlite)', () => {
  let embeddings: FakeEmbeddings;
  let ws: WorkspaceServer;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    ws = await startWorkspaceServer('sqlite');
  });
  after(async () => {
    await ws?.dispose();
    await embeddings?.close();
  });

  it('answers 404 without a level, 403 for a level too low, and works with the level', async () => {
    const created = await ws.as('userA', 'POST', '/ragstore/rags', knowledgeBaseBody(embeddings));
    assert.equal(created.status, 201, created.text);
    const id = idFromLocation(created.headers.get('location'));
    const documents = { documents: [{ name: 'plan.txt', content: 'The plan costs ten euros.' }] };
    const ingested = await ws.as('userA', 'POST', `/ragstore/rags/${id}/ingest`, documents);
    assert.equal(ingested.status, 202, ingested.text);
    const statusPath = `/ragstore/rags/${id}/ingestion/${ingested.json.ingestionId}/status`;
    let status = (await ws.as('userA', 'GET', statusPath)).json;
    while (status.status === 'pending' || status.status === 'processing') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (await ws.as('userA', 'GET', statusPath)).json;
    }
    assert.equal(status.status, 'completed');
    const [document] = (await ws.as('userA', 'GET', `/ragstore/rags/${id}/documents`)).json;

    const attempts = (user: 'userB' | 'viewer') => [
      ws.as(user, 'POST', `/ragstore/rags/${id}/ingest`, documents),
      ws.as(user, 'GET', `/ragstore/rags/${id}/ingestion/${ingested.json.ingestionId}/status`),
      ws.as(user, 'GET', `/ragstore/rags/${id}/documents`),
      ws.as(user, 'POST', `/ragstore/rags/${id}/search`, { query: 'plan' }),
      ws.as(user, 'DELETE', `/ragstore/rags/${id}/documents/${document.id}`),
    ];
    assert.deepEqual(
      (await Promise.all(attempts('userB'))).map((answer) => answer.status),
      [404, 404, 404, 404, 404],
    );
    assert.deepEqual(
      (await Promise.all(attempts('viewer'))).map((answer) => answer.status),
      [403, 404, 404, 404, 403],
    );

    const granted = await ws.as('userA', 'PUT', `/descriptorstore/descriptors/${id}/grants`, [
      { principal: 'bob', level: 'USE' },
    ]);
    assert.equal(granted.status, 200, granted.text);
    assert.deepEqual(
      (await Promise.all(attempts('userB'))).map((answer) => answer.status),
      [403, 200, 200, 200, 403],
    );
    assert.equal((await ws.as('admin', 'GET', `/ragstore/rags/${id}/documents`)).status, 200);
    assert.equal((await ws.as('userA', 'DELETE', `/ragstore/rags/${id}/documents/${document.id}`)).status, 204);
  });
});
