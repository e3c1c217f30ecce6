import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createResource, deployAgent } from './support/agents.ts';
import type { Answer } from './support/http.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** The secrets vault through the REST API: write-only secrets, 503 without a master key, secret-scoped properties. */

const MASTER_KEY = 'black-box master key 7f3a9c1e5b2d';
const REST_SECRET = 'sk-rest-secret-9d8c7b6a5f4e3d2c1b0a';
const REPLACED_SECRET = 'sk-replaced-secret-0a1b2c3d4e5f6a7b';
const MALFORMED_SECRET = 'sk-malformed-json-secret-5e6f7a8b9c';
const INVALID_SECRET = 'sk-invalid-body-secret-1c2d3e4f5a6b';
const CONTEXT_SECRET = 'ctx-secret-from-the-start-context-42';
const CONFIG_SECRET = 'cfg-secret-from-the-setter-config-17';
/** Values that no answer and no log line may ever contain. */
const NEVER_SHOWN = [REST_SECRET, REPLACED_SECRET, MALFORMED_SECRET, INVALID_SECRET, CONTEXT_SECRET];

const secretProperties = {
  type: 'svc://ai.svc.property',
  config: {
    setOnActions: [
      {
        actions: ['CONVERSATION_START'],
        setProperties: [
          { name: 'configToken', valueString: CONFIG_SECRET, scope: 'secret' },
          { name: 'contextToken', fromObjectPath: 'context.apiToken', scope: 'secret' },
        ],
      },
    ],
  },
};

const startBody = { context: { apiToken: { type: 'string', value: CONTEXT_SECRET } } };

for (const storeType of storeTypes) {
  describe(`secrets vault on ${storeType}`, () => {
    const block = serverOfBlock(storeType, { 'svc.log.level': 'trace' });
    const { api } = block;
    const answers: Answer[] = [];
    const record = (answer: Answer) => {
      answers.push(answer);
      return answer;
    };
    let agentId: string;

    before(async () => {
      agentId = await deployAgent(api, { extensions: [secretProperties] });
    });

    const assertProblem = (answer: Answer, status: number, detail?: RegExp) => {
      assert.equal(answer.status, status, answer.text);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(answer.json.status, status);
      if (detail) assert.match(answer.json.detail, detail);
    };

    it('without a master key every secret endpoint answers 503, whatever the request', async () => {
      const disabled = /vault is disabled: set svc\.vault\.master-key/;
      assertProblem(
        record(await api.put('/secretstore/secrets/default/openai-key', { json: { value: REST_SECRET } })),
        503,
        disabled,
      );
      assertProblem(
        record(await api.put('/secretstore/secrets/default/bad%20name', { json: { value: REST_SECRET, extra: 1 } })),
        503,
        disabled,
      );
      assertProblem(record(await api.get('/secretstore/secrets/default')), 503, disabled);
      assertProblem(record(await api.get('/secretstore/secrets/default/openai-key')), 503, disabled);
      assertProblem(record(await api.delete('/secretstore/secrets/default/openai-key')), 503, disabled);
    });

    it('without a master key a secret-scoped property fails the turn closed and keeps no value', async () => {
      const started = record(await api.post(`/agents/${agentId}/start`, { json: startBody }));
      assert.equal(started.status, 201, started.text);
      assert.equal(started.json.conversationState, 'ERROR');
      assert.deepEqual(started.json.conversationProperties, {});
      const detailed = record(
        await api.get(`/agents/${started.json.conversationId}?returnDetailed=true&returnCurrentStepOnly=false`),
      );
      assert.ok(!detailed.text.includes(CONFIG_SECRET));
      assert.ok(
        block.server.logLines.some((line) => line.includes("secret-scoped property 'configToken' cannot be set")),
      );
    });

    it('with a master key: PUT creates and replaces, GET and list show metadata only, DELETE removes', async () => {
      await block.server.restart({ 'svc.vault.master-key': MASTER_KEY });
      const created = record(
        await api.put('/secretstore/secrets/default/openai-key', {
          json: { value: REST_SECRET, description: 'OpenAI' },
        }),
      );
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(Object.keys(created.json).sort(), [
        'createdAt',
        'description',
        'lastModifiedAt',
        'name',
        'reference',
      ]);
      assert.equal(created.json.name, 'openai-key');
      assert.equal(created.json.reference, '${vault:openai-key}');
      assert.equal(created.json.description, 'OpenAI');
      assert.match(created.json.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const replaced = record(
        await api.put('/secretstore/secrets/default/openai-key', { json: { value: REPLACED_SECRET } }),
      );
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.json.createdAt, created.json.createdAt);
      assert.equal(replaced.json.description, 'OpenAI', 'an omitted description is kept');
      assert.ok(replaced.json.lastModifiedAt >= created.json.lastModifiedAt);

      const one = record(await api.get('/secretstore/secrets/default/openai-key'));
      assert.equal(one.status, 200);
      assert.deepEqual(one.json, replaced.json);
      record(await api.put('/secretstore/secrets/default/Another.Key_2', { json: { value: 'another-value-123' } }));
      const list = record(await api.get('/secretstore/secrets/default'));
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.json.map((secret: { name: string }) => secret.name),
        ['Another.Key_2', 'openai-key'],
      );
      assert.equal(list.json[0].description, '');

      assertProblem(record(await api.get('/secretstore/secrets/default/unknown')), 404, /No secret 'unknown'/);
      assertProblem(record(await api.get('/secretstore/secrets/acme')), 404, /one tenant 'default'/);
      assert.equal(record(await api.delete('/secretstore/secrets/default/Another.Key_2')).status, 200);
      assertProblem(record(await api.delete('/secretstore/secrets/default/Another.Key_2')), 404);
      assertProblem(record(await api.get('/secretstore/secrets/default/Another.Key_2')), 404);
    });

    it('bad names and bad bodies answer 400 without echoing the value', async () => {
      assertProblem(
        record(await api.put('/secretstore/secrets/default/bad%20name', { json: { value: INVALID_SECRET } })),
        400,
        /name/,
      );
      assertProblem(
        record(await api.put(`/secretstore/secrets/default/${'x'.repeat(201)}`, { json: { value: INVALID_SECRET } })),
        400,
      );
      assertProblem(
        record(
          await api.put('/secretstore/secrets/default/ok', { json: { value: INVALID_SECRET, extra: INVALID_SECRET } }),
        ),
        400,
        /Unknown field 'extra'/,
      );
      assertProblem(
        record(await api.put('/secretstore/secrets/default/ok', { json: { value: 42, description: INVALID_SECRET } })),
        400,
        /\$\.value/,
      );
      assertProblem(record(await api.put('/secretstore/secrets/default/ok', { json: { value: '' } })), 400);
      assertProblem(
        record(await api.put('/secretstore/secrets/default/ok', { json: { description: 'no value' } })),
        400,
        /value/,
      );
      assertProblem(
        record(
          await api.put('/secretstore/secrets/default/ok', {
            body: `{"value": "${MALFORMED_SECRET}",}`,
            headers: { 'content-type': 'application/json' },
          }),
        ),
        400,
        /not valid JSON/,
      );
      assertProblem(
        record(
          await api.put('/secretstore/secrets/default/ok', {
            body: MALFORMED_SECRET,
            headers: { 'content-type': 'text/plain' },
          }),
        ),
        400,
      );
      assertProblem(record(await api.put('/secretstore/secrets/default/ok')), 400);
      assertProblem(record(await api.get('/secretstore/secrets/default/ok')), 404, /No secret 'ok'/);
    });

    it('a secret-scoped property writes <agentId>.<name> to the vault and keeps only the reference', async () => {
      const started = record(await api.post(`/agents/${agentId}/start`, { json: startBody }));
      assert.equal(started.status, 201, started.text);
      assert.equal(started.json.conversationState, 'READY');
      assert.deepEqual(started.json.conversationProperties, {
        configToken: { name: 'configToken', value: `\${vault:${agentId}.configToken}`, scope: 'conversation' },
        contextToken: { name: 'contextToken', value: `\${vault:${agentId}.contextToken}`, scope: 'conversation' },
      });
      const detailed = record(
        await api.get(`/agents/${started.json.conversationId}?returnDetailed=true&returnCurrentStepOnly=false`),
      );
      assert.ok(!detailed.text.includes(CONFIG_SECRET));
      record(await api.get(`/conversationstore/conversations/${started.json.conversationId}`));
      const names = record(await api.get('/secretstore/secrets/default')).json.map(
        (secret: { name: string }) => secret.name,
      );
      assert.ok(names.includes(`${agentId}.configToken`) && names.includes(`${agentId}.contextToken`), names.join());
    });

    it('a secret taken from the message stays out of the whole turn, later workflows included', async () => {
      const pin = 'Pin-Code-Secret-7e6d5c4b';
      const pinSetter = await createResource(api, '/propertysetterstore/propertysetters', {
        propertyInstructions: [{ name: 'pin', fromObjectPath: 'memory.current.input', scope: 'secret' }],
      });
      const twoWorkflowsId = await deployAgent(api, {
        extensions: [{ type: 'svc://ai.svc.property', config: { uri: pinSetter } }],
        moreWorkflows: [[{ type: 'svc://ai.svc.parser', config: {} }]],
      });
      const started = record(await api.post(`/agents/${twoWorkflowsId}/start`));
      const said = record(
        await api.post(`/agents/${started.json.conversationId}?returnDetailed=true`, { json: { input: pin } }),
      );
      assert.equal(said.json.conversationState, 'READY', said.text);
      assert.equal(said.json.conversationProperties.pin.value, `\${vault:${twoWorkflowsId}.pin}`);
      const stored = record(await api.get(`/conversationstore/conversations/${started.json.conversationId}`));
      for (const text of [said.text, stored.text]) {
        assert.ok(
          !text.toLowerCase().includes(pin.toLowerCase()),
          'the secret is nowhere in the step, in any letter case',
        );
      }
    });

    it('after a restart with the same key the secrets read back; a wrong key is refused at start-up', async () => {
      await block.server.restart({ 'svc.vault.master-key': MASTER_KEY });
      const resolved = await block.server.server.vault
        .resolver()
        .resolve(`\${vault:openai-key} \${vault:default/${agentId}.contextToken} \${vault:${agentId}.configToken}`);
      assert.equal(resolved.text, `${REPLACED_SECRET} ${CONTEXT_SECRET} ${CONFIG_SECRET}`);
      await assert.rejects(
        block.server.server.vault.resolver().resolve('${vault:Another.Key_2}'),
        /Secret 'Another.Key_2' is not in the vault/,
      );

      await assert.rejects(block.server.restart({ 'svc.vault.master-key': 'not the master key' }), (error: Error) => {
        assert.match(error.message, /does not match/);
        assert.ok(!error.message.includes('not the master key') && !error.message.includes(MASTER_KEY));
        return true;
      });
      await block.server.restart({ 'svc.vault.master-key': MASTER_KEY });
      assert.equal(record(await api.get('/secretstore/secrets/default/openai-key')).status, 200);
    });

    it('no answer and no log line ever held a secret value or the master key', () => {
      assert.ok(answers.length > 20);
      assert.ok(block.server.logLines.length > 0);
      for (const value of [...NEVER_SHOWN, MASTER_KEY]) {
        for (const answer of answers)
          assert.ok(
            !answer.text.includes(value),
            `an answer holds ${value.slice(0, 8)}...: ${answer.text.slice(0, 2000)}`,
          );
        for (const line of block.server.logLines)
          assert.ok(!line.includes(value), `a log line holds ${value.slice(0, 8)}...: ${line.slice(0, 300)}`);
      }
      for (const line of block.server.logLines)
        assert.ok(!line.includes(CONFIG_SECRET), 'the configured value is never logged either');
    });
  });
}
