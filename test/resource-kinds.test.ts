import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resourceKinds } from '../src/resources/kinds.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('GET /resourcekinds', () => {
  let server: TestServer;
  const api = client(() => server.url);
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(async () => {
    await server?.dispose();
  });

  it('serves the kinds table the manager builds its screens from', async () => {
    const answer = await api.get('/resourcekinds');
    assert.equal(answer.status, 200, answer.text);
    const kinds = answer.json as {
      name: string;
      slug: string;
      storePath: string;
      uriType: string;
      template: unknown;
    }[];
    assert.deepEqual(
      kinds.map((kind) => kind.name),
      resourceKinds.map((kind) => kind.name),
    );
    const dictionary = kinds.find((kind) => kind.name === 'dictionary')!;
    assert.equal(dictionary.storePath, '/regulardictionarystore/regulardictionaries');
    assert.equal(dictionary.uriType, 'regulardictionary');
    assert.equal(dictionary.slug, 'dictionaries');
    assert.deepEqual(Object.keys(dictionary).sort(), [
      'label',
      'name',
      'slug',
      'storePath',
      'template',
      'title',
      'uriType',
    ]);
    for (const kind of kinds) {
      const created = await api.post(kind.storePath, { json: kind.template });
      assert.equal(created.status, 201, `${kind.name}: the template is a valid body (${created.text})`);
    }
  });
});
