import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, deploy, idFromLocation, welcomeOutputs } from './support/agents.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/** The fixed response shapes: documented in OpenAPI, written by Fastify's schema serialiser. */

const CONVERSATION_KEYS = [
  'conversationId',
  'agentId',
  'agentVersion',
  'userId',
  'environment',
  'conversationState',
  'undoAvailable',
  'redoAvailable',
  'conversationOutputs',
  'conversationProperties',
  'conversationSteps',
];
/**
 * The documented shape adds the human-in-the-loop fields, present only while a turn waits for a person (or
 * messages queued then wait), and `error`, present only while the conversation is in ERROR.
 */
const DOCUMENTED_CONVERSATION_KEYS = [
  ...CONVERSATION_KEYS,
  'hitlPausedAt',
  'hitlPauseType',
  'hitlPendingToolCalls',
  'hitlQueuedMessages',
  'error',
];

describe('the typed HTTP edge', () => {
  let server: TestServer;
  const api = client(() => server.url);
  let agentId: string;

  before(async () => {
    server = await startTestServer('sqlite');
    agentId = await createAgent(api, { outputSet: welcomeOutputs });
    await deploy(api, agentId);
  });
  after(async () => {
    await server?.dispose();
  });

  it('OpenAPI describes the conversation, descriptor and deployment responses', async () => {
    const { paths } = (await api.get('/q/openapi')).json;
    const response = (path: string, method: string, status = '200') => paths[path][method].responses[status].content;
    const schemaOf = (path: string, method: string, status = '200') =>
      response(path, method, status)['application/json'].schema;

    assert.deepEqual(Object.keys(schemaOf('/agents/{conversationId}', 'get').properties), DOCUMENTED_CONVERSATION_KEYS);
    assert.deepEqual(
      Object.keys(schemaOf('/agents/{agentId}/start', 'post', '201').properties),
      DOCUMENTED_CONVERSATION_KEYS,
    );
    assert.deepEqual(
      Object.keys(schemaOf('/agents/{conversationId}', 'post').properties),
      DOCUMENTED_CONVERSATION_KEYS,
    );
    const bot = schemaOf('/bots/{environment}/{botId}/{conversationId}', 'get');
    assert.deepEqual(Object.keys(bot.properties).slice(0, 3), ['conversationId', 'botId', 'botVersion']);
    const stored = schemaOf('/conversationstore/conversations/{conversationId}', 'get');
    assert.deepEqual(Object.keys(stored.properties), [
      ...DOCUMENTED_CONVERSATION_KEYS,
      'redoCacheSize',
      'createdOn',
      'lastModifiedOn',
    ]);
    const listed = schemaOf('/conversationstore/conversations', 'get');
    assert.ok(listed.items.properties.conversationStepSize);

    const descriptor = schemaOf('/descriptorstore/descriptors/{id}', 'get');
    assert.ok(
      ['resource', 'name', 'description', 'createdOn', 'lastModifiedOn', 'deleted'].every(
        (key) => key in descriptor.properties,
      ),
    );
    assert.ok(schemaOf('/agentstore/agents/descriptors', 'get').items.properties.resource);

    const status = response('/administration/{environment}/deploymentstatus/{agentId}', 'get');
    assert.ok(status['application/json'].schema.properties.status);
    assert.ok(status['text/plain'].schema, 'format=text answers the bare word');
    assert.ok(schemaOf('/administration/{environment}/deploy/{agentId}', 'post', '202').properties.agentVersion);

    const create = paths['/agentstore/agents'].post;
    assert.ok(
      create.parameters.some(
        (parameter: { name: string; in: string }) => parameter.name === 'space' && parameter.in === 'query',
      ),
    );
  });

  it('the serialiser writes exactly the documented conversation and keeps open-ended step data', async () => {
    const order = { items: [1, { deep: true, note: null }], total: 2.5 };
    const started = await api.post(`/agents/${agentId}/start`, {
      json: { input: 'hello', context: { order: { type: 'object', value: order } } },
    });
    assert.equal(started.status, 201, started.text);
    assert.deepEqual(Object.keys(started.json), CONVERSATION_KEYS);
    const conversationId = idFromLocation(started.headers.get('location'));

    const detailed = await api.get(`/agents/${conversationId}?returnDetailed=true&returnCurrentStepOnly=false`);
    assert.deepEqual(Object.keys(detailed.json), CONVERSATION_KEYS);
    for (const step of detailed.json.conversationSteps) {
      assert.deepEqual(step.conversationStep.find((entry: { key: string }) => entry.key === 'context:order').value, {
        type: 'object',
        value: order,
      });
    }
    assert.equal(detailed.json.conversationOutputs[1].input, 'hello');
    assert.ok(Object.keys(detailed.json.conversationOutputs[0]).length > 2, 'a detailed step keeps every output key');

    const stored = await api.get(`/conversationstore/conversations/${conversationId}`);
    assert.deepEqual(Object.keys(stored.json), [...CONVERSATION_KEYS, 'redoCacheSize', 'createdOn', 'lastModifiedOn']);
    const listed = await api.get(`/conversationstore/conversations?agentId=${agentId}`);
    assert.deepEqual(Object.keys(listed.json[0]), [
      'resource',
      'conversationId',
      'agentId',
      'agentVersion',
      'userId',
      'environment',
      'conversationState',
      'conversationStepSize',
      'createdOn',
      'lastModifiedOn',
    ]);
    const bot = await api.get(`/bots/production/${agentId}/${conversationId}`);
    assert.deepEqual(
      Object.keys(bot.json),
      CONVERSATION_KEYS.map((key) => ({ agentId: 'botId', agentVersion: 'botVersion' })[key] ?? key),
    );
  });

  it('a missing body is a 400 problem where the route needs one; messages may come without', async () => {
    const ttl = await api.put('/llm/tools/cache/ttl/calculator');
    assert.equal(ttl.status, 400, ttl.text);
    assert.match(ttl.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(ttl.json.detail, /body/);

    const started = await api.post(`/agents/${agentId}/start`);
    assert.equal(started.status, 201, started.text);
    const message = await api.post(`/agents/${started.json.conversationId}`);
    assert.equal(message.status, 200, message.text);
  });
});
