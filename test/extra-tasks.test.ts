import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { echoTask } from './support/echo-task.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('a task type registered from outside (extraTasks)', () => {
  let server: TestServer;
  const api = client(() => server.url);
  before(async () => {
    server = await startTestServer('sqlite', {}, [echoTask]);
  });
  after(async () => {
    await server?.dispose();
  });

  it('has its config accepted at write time, and the typed config reaches its compile', async () => {
    const agentId = await deployAgent(api, {
      extensions: [{ type: 'svc://ai.svc.test.echo', config: { prefix: 'heard: ' } }],
    });
    const { conversationId } = await startConversation(api, agentId);
    const answer = await sendMessage(api, conversationId, 'hello');
    assert.deepEqual(answer.conversationOutputs.at(-1).output, ['heard: hello']);
  });

  it('refuses an unknown field of its config with the field and its JSON path', async () => {
    const refused = await api.post('/packagestore/packages', {
      json: {
        packageExtensions: [
          { type: 'svc://ai.svc.parser' },
          { type: 'svc://ai.svc.test.echo', config: { prefix: 'x', surprise: true } },
        ],
      },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.path, '$.packageExtensions[1].config.surprise');
    assert.match(refused.json.detail, /Unknown field 'surprise'/);
    const wrongType = await api.post('/packagestore/packages', {
      json: { packageExtensions: [{ type: 'svc://ai.svc.test.echo', config: { prefix: 1 } }] },
    });
    assert.equal(wrongType.status, 400, wrongType.text);
    assert.equal(wrongType.json.path, '$.packageExtensions[0].config.prefix');
  });

  it('is part of the workflow JSON schema', async () => {
    const schema = await api.get('/packagestore/packages/jsonSchema');
    assert.equal(schema.status, 200);
    assert.match(schema.text, /ai\.svc\.test\.echo/);
    assert.match(schema.text, /Put before the echoed input/);
  });
});
