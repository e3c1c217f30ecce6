import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createAgent, createResource, deploy, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { echoTask } from './support/echo-task.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** Details of the spec the original's users rely on (issue 14, item 7), through the REST API. */

const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
/** A behavior set whose one rule always fires with action `hit`. */
const alwaysHit = { behaviorGroups: [{ name: 'G', behaviorRules: [{ name: 'R', actions: ['hit'], conditions: [] }] }] };
const hitOutputs = { outputSet: [{ action: 'hit', timesOccurred: 0, outputs: [text('Hit!')] }] };

for (const storeType of storeTypes) {
  describe(`spec details on ${storeType}`, () => {
    const { api } = serverOfBlock(storeType);

    it("a workflow step may name its resource in 'extensions.uri' (behavior, output, property)", async () => {
      const behavior = await createResource(api, '/behaviorstore/behaviorsets', alwaysHit);
      const output = await createResource(api, '/outputstore/outputsets', hitOutputs);
      const property = await createResource(api, '/propertysetterstore/propertysetters', {
        setOnActions: [
          { actions: ['hit'], setProperties: [{ name: 'said', fromObjectPath: 'input', scope: 'conversation' }] },
        ],
      });
      const agentId = await deployAgent(api, {
        extensions: [
          { type: 'svc://ai.svc.behavior', extensions: { uri: behavior } },
          { type: 'svc://ai.svc.property', extensions: { uri: property } },
          { type: 'svc://ai.svc.output', extensions: { uri: output } },
        ],
      });
      const { conversationId } = await startConversation(api, agentId);
      const answer = await sendMessage(api, conversationId, 'anything');
      assert.deepEqual(answer.conversationOutputs[0].actions, ['hit']);
      assert.deepEqual(answer.conversationOutputs[0].output, ['Hit!']);
      assert.equal(answer.conversationProperties.said?.value, 'anything');
    });

    it("fromObjectPath 'input' (the spec's example) is the user's input, inline and in arithmetic", async () => {
      const behavior = await createResource(api, '/behaviorstore/behaviorsets', alwaysHit);
      const agentId = await deployAgent(api, {
        extensions: [
          { type: 'svc://ai.svc.behavior', config: { uri: behavior } },
          {
            type: 'svc://ai.svc.property',
            config: {
              setOnActions: [
                {
                  actions: ['hit'],
                  setProperties: [
                    { name: 'short', fromObjectPath: 'input', scope: 'conversation' },
                    { name: 'long', fromObjectPath: 'memory.current.input', scope: 'conversation' },
                    { name: 'shouted', fromObjectPath: "input+'!'", scope: 'conversation' },
                  ],
                },
              ],
            },
          },
        ],
      });
      const { conversationId } = await startConversation(api, agentId);
      const { conversationProperties } = await sendMessage(api, conversationId, 'Vienna');
      assert.equal(conversationProperties.short?.value, 'Vienna');
      assert.equal(conversationProperties.long?.value, 'Vienna');
      assert.equal(conversationProperties.shouted?.value, 'Vienna!');
    });

    it('DELETE /conversationstore/conversations deletes in bulk: older than deleteOlderThanDays, matching the filters', async () => {
      const agentId = await deployAgent(api, { outputSet: hitOutputs });
      const other = await deployAgent(api, { outputSet: hitOutputs });
      const started = [
        (await startConversation(api, agentId)).conversationId,
        (await startConversation(api, agentId)).conversationId,
      ];
      const kept = (await startConversation(api, other)).conversationId;
      const listed = async (id: string) =>
        (await api.get(`/conversationstore/conversations?agentId=${id}`)).json.map(
          (c: { conversationId?: string; id?: string }) => c,
        ).length;

      const recent = await api.delete(`/conversationstore/conversations?deleteOlderThanDays=1&agentId=${agentId}`);
      assert.equal(recent.status, 200, recent.text);
      assert.deepEqual(recent.json, { deleted: 0 });
      assert.equal(await listed(agentId), 2);

      const all = await api.delete(`/conversationstore/conversations?deleteOlderThanDays=0&agentId=${agentId}`);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(all.json, { deleted: 2 });
      assert.equal(await listed(agentId), 0);
      for (const id of started) assert.equal((await api.get(`/conversationstore/conversations/${id}`)).status, 404);
      assert.equal((await api.get(`/conversationstore/conversations/${kept}`)).status, 200);

      for (const query of [
        '',
        '?deleteOlderThanDays=-1',
        '?deleteOlderThanDays=abc',
        '?deleteOlderThanDays=Infinity',
      ]) {
        const refused = await api.delete(`/conversationstore/conversations${query}`);
        assert.equal(refused.status, 400, `${query}: ${refused.text}`);
        assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
      }
      assert.equal((await api.get(`/conversationstore/conversations/${kept}`)).status, 200);
    });

    it('channel secrets are vault references only: a literal is refused (400), a reference is kept and returned as it is', async () => {
      const literal = await api.post('/agentstore/agents', {
        json: {
          packages: [],
          channels: [{ type: 'messenger', config: { appSecret: 's3cr3t-value', pageAccessToken: '${vault:PAGE}' } }],
        },
      });
      assert.equal(literal.status, 400, literal.text);
      assert.ok(!literal.text.includes('s3cr3t-value'), literal.text);
      assert.match(literal.text, /channels\[0\]\.config\.appSecret/);
      assert.match(literal.text, /vault/);

      const channels = [
        {
          type: 'messenger',
          config: {
            appSecret: '${vault:APP_SECRET}',
            verificationToken: '${vault:VERIFY}',
            pageAccessToken: '',
            pageName: 'public, not a secret',
          },
        },
      ];
      const location = await createResource(api, '/agentstore/agents', { packages: [], channels });
      const read = await api.get(location.replace(/^svc:\/\/[^/]+/, ''));
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.json.channels, channels);

      const id = /\/([0-9a-f]{24})\?/.exec(location)![1];
      const replaced = await api.put(`/agentstore/agents/${id}?version=1`, {
        json: { packages: [], channels: [{ type: 'messenger', config: { verificationToken: 'plain' } }] },
      });
      assert.equal(replaced.status, 400, replaced.text);
    });
  });
}

describe('paths no route serves, the OpenAPI document', () => {
  const { api } = serverOfBlock('sqlite');

  it('an API path no route serves answers a 404 problem; only / and /manager/... answer the manager page', async () => {
    for (const path of [
      '/agentstore/nothing',
      '/nothing/at/all',
      '/conversations',
      '/a2a/agents/x/y/z',
      '/favicon.ico',
    ]) {
      const answer = await api.get(path);
      assert.equal(answer.status, 404, path);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/, path);
      assert.equal(answer.json.status, 404, path);
    }
    for (const path of ['/', '/manager', '/manager/agents/0123456789abcdef01234567']) {
      const answer = await api.get(path);
      // The page, or (in a checkout where the manager is not built) the 503 saying so.
      if (answer.status === 503) assert.match(answer.json.detail, /web manager is not built/, path);
      else assert.match(answer.headers.get('content-type') ?? '', /text\/html/, `${path}: ${answer.status}`);
    }
  });

  it('/q/openapi is a valid OpenAPI 3.1 document (schemas use if/then/else)', async () => {
    const answer = await api.get('/q/openapi');
    assert.equal(answer.status, 200);
    assert.match(answer.json.openapi, /^3\.1\./);
    assert.ok(answer.text.includes('"if":'), 'the document has if/then/else schemas');
    const result = await new Validator().validate(answer.json);
    assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
  });
});

describe('agent cards name the token endpoint, also with authentication off', () => {
  const { api } = serverOfBlock(
    'sqlite',
    { 'svc.oidc.tenant-enabled': false, 'svc.oidc.auth-server-url': 'https://auth.example.com/realms/svc' },
    [echoTask],
  );

  it('card, default card and roster carry authentication {schemes, credentials: the token endpoint}', async () => {
    const agentId = await createAgent(api, {
      extensions: [{ type: 'svc://ai.svc.test.echo', config: {} }],
      agent: { a2aEnabled: true },
      name: 'Carded',
    });
    await deploy(api, agentId);
    const expected = {
      schemes: ['Bearer'],
      credentials: 'https://auth.example.com/realms/svc/protocol/openid-connect/token',
    };
    const card = await api.get(`/a2a/agents/${agentId}/agent.json`);
    assert.equal(card.status, 200, card.text);
    assert.deepEqual(card.json.authentication, expected);
    assert.deepEqual((await api.get('/.well-known/agent.json')).json.authentication, expected);
    const roster = (await api.get('/a2a/agents')).json;
    assert.deepEqual(roster.find((c: { url: string }) => c.url.endsWith(agentId)).authentication, expected);
  });
});
