import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { deployAgent, startConversation, welcomeOutputs } from './support/agents.ts';
import { call, client } from './support/http.ts';
import { startTestServer, storeTypes, type TestServer } from './support/server.ts';

/**
 * Deeply nested JSON (issue 13, item 9): bodies and imported files nesting deeper than `svc.http.max-json-depth`
 * are refused with 400 before they are parsed, and a turn that fails to commit leaves the cached conversation as
 * it was (no step that was never stored, no false 409 afterwards).
 */

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** A message body whose context value nests `depth` arrays inside the body's own two levels. */
const deepMessage = (depth: number) =>
  `{"input":"hello","context":{"deep":{"type":"object","value":${nested(depth)}}}}`;

for (const store of storeTypes) {
  describe(`deep JSON (${store})`, () => {
    let server: TestServer;
    const api = client(() => server.url);
    before(async () => {
      server = await startTestServer(store);
    });
    after(() => server.dispose());

    const post = (path: string, body: string) =>
      call(server.url, 'POST', path, { body, headers: { 'content-type': 'application/json' } });
    const stepsOf = async (conversationId: string) => {
      const read = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
      assert.equal(read.status, 200, read.text);
      return read.json.conversationSteps.length as number;
    };

    it('refuses a 10,000-deep context value with 400 and the conversation goes on as before', async () => {
      const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
      const { conversationId } = await startConversation(api, agentId);
      const sent = await post(`/agents/${conversationId}`, JSON.stringify({ input: 'hi' }));
      assert.equal(sent.status, 200, sent.text);
      const steps = await stepsOf(conversationId);

      const deep = await post(`/agents/${conversationId}`, deepMessage(10_000));
      assert.equal(deep.status, 400, deep.text);
      assert.match(deep.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.match(deep.json.detail, /deeper than 100 levels \(svc\.http\.max-json-depth\)/);
      assert.equal(await stepsOf(conversationId), steps);

      const within = await post(`/agents/${conversationId}`, deepMessage(90));
      assert.equal(within.status, 200, within.text);
      assert.equal((await api.post(`/agents/${conversationId}/undo`)).status, 200);
      assert.equal((await api.post(`/agents/${conversationId}/redo`)).status, 200);
      assert.equal((await post(`/agents/${conversationId}`, JSON.stringify({ input: 'again' }))).status, 200);
      assert.equal(await stepsOf(conversationId), steps + 2);
    });

    it('refuses deep bodies on every route, whatever parses them', async () => {
      const resource = await post('/regulardictionarystore/regulardictionaries', `{"words":${nested(5_000)}}`);
      assert.equal(resource.status, 400, resource.text);
      assert.match(resource.json.detail, /svc\.http\.max-json-depth/);
      const mcp = await post('/mcp', `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nested(5_000)}}`);
      assert.equal(mcp.status, 400, mcp.text);
      const secret = await call(server.url, 'PUT', '/secretstore/secrets/default/deep', {
        body: `{"value":${nested(5_000)}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.ok(secret.status === 400 || secret.status === 503, secret.text);
    });

    it('a body just longer than the limit is scanned (shorter ones cannot nest deeper than their length)', async () => {
      await server.restart({ 'svc.http.max-json-depth': 6 });
      try {
        // Seven bytes, seven levels: the shortest body that is too deep (refused before any parser sees it).
        const tooDeep = await post('/regulardictionarystore/regulardictionaries', '['.repeat(7));
        assert.equal(tooDeep.status, 400, tooDeep.text);
        assert.match(tooDeep.json.detail, /deeper than 6 levels/);
        const deepEnough = await post('/regulardictionarystore/regulardictionaries', nested(6));
        assert.doesNotMatch(deepEnough.text, /max-json-depth/);
      } finally {
        await server.restart();
      }
    });

    it('a turn that fails to commit leaves the cached conversation as it was', async () => {
      await server.restart({ 'svc.http.max-json-depth': 1_000_000 });
      try {
        const agentId = await deployAgent(api, { outputSet: welcomeOutputs });
        const { conversationId } = await startConversation(api, agentId);
        assert.equal((await post(`/agents/${conversationId}`, JSON.stringify({ input: 'hi' }))).status, 200);
        const steps = await stepsOf(conversationId);
        // Allowed through by the raised limit, the value cannot be stored: the turn is not committed.
        const deep = await post(`/agents/${conversationId}`, deepMessage(10_000));
        assert.notEqual(deep.status, 200, deep.text);
        assert.equal(await stepsOf(conversationId), steps, 'no step that was never stored');
        assert.equal((await api.post(`/agents/${conversationId}/undo`)).status, 200);
        assert.equal((await api.post(`/agents/${conversationId}/redo`)).status, 200);
        const next = await post(`/agents/${conversationId}`, JSON.stringify({ input: 'again' }));
        assert.equal(next.status, 200, `no false 409: ${next.text}`);
        assert.equal(await stepsOf(conversationId), steps + 1);
      } finally {
        await server.restart();
      }
    });
  });
}

describe('deep JSON in imports and null bodies', () => {
  let server: TestServer;
  const api = client(() => server.url);
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.dispose());

  it('refuses an import ZIP whose file nests 100,000 deep with 400 naming the file', async () => {
    const file = '0123456789abcdef01234567.agent.json';
    const zip = zipSync({ [file]: strToU8(`{"packages":${nested(100_000)}}`) });
    for (const path of ['/backup/import', '/backup/import/preview']) {
      const answer = await call(server.url, 'POST', path, {
        body: zip,
        headers: { 'content-type': 'application/zip' },
      });
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.json.file, file);
      assert.match(answer.json.detail, /deeper than 100 levels \(svc\.http\.max-json-depth\)/);
    }
  });

  it('answers 400 to null bodies on the tool-history PUTs', async () => {
    for (const path of ['/llm/tools/cache/ttl/calculator', '/llm/tools/ratelimit/calculator']) {
      const answer = await api.put(path, { body: 'null', headers: { 'content-type': 'application/json' } });
      assert.equal(answer.status, 400, `${path}: ${answer.text}`);
    }
  });
});
