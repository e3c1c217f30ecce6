import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createResource, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * The original service's own agent exports (issue 14, `../shared/fixtures/upstream-exports/`): each imports as it is
 * with the default strategy, deploys READY and answers "hello" without ERROR, on both stores.
 */

const FIXTURES = join(import.meta.dirname, '../../shared/fixtures/upstream-exports');

/**
 * Exports that still fail only because of the names and field migrations of issue 14 items 1 and 2 (worked on
 * separately): run, reported, not counted. Remove an entry as soon as its export passes.
 */
const WAITING_FOR_MIGRATIONS: Readonly<Record<string, string>> = {
  '4.6__example_bot_v1.zip': 'item 1: eddi://ai.labs.* references',
  '4.6__happy_bot_v1.zip': 'item 1: eddi://ai.labs.* references',
  '4.7__tv_bot_v1.zip': 'item 2: gitBackupSettings',
  '4.8.0__registration_bot_1.zip': 'item 2: gitBackupSettings',
  '4.10.0__Validation+Bot-5e5ebd254309e52048276d38-1.zip': 'item 1: eddi://ai.labs.* references',
  '5.0.0__Multi+Purpose+Bot.zip': 'item 1: eddi://ai.labs.* references',
  '5.1.0__Bot+Father-1.0.0.zip': 'item 1: eddi://ai.labs.* references',
  '5.4.0__Bot+Father-3.0.0.zip': 'item 1: eddi://ai.labs.* references',
  '6.0.0-RC1__weather_bot_v1.zip': 'item 1: eddi://ai.labs.* references',
  '6.0.0__Agent+Father-6.0.0.zip': "item 1: '\\' in ZIP entry names",
};

const exportFiles = (await readdir(FIXTURES)).filter((name) => name.endsWith('.zip')).sort();

for (const storeType of storeTypes) {
  describe(`the original service's exports on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;

    it('finds the ten exports', () => assert.equal(exportFiles.length, 10));

    for (const file of exportFiles) {
      it(`${file}: imports, deploys READY and answers "hello"`, { todo: WAITING_FOR_MIGRATIONS[file] }, async () => {
        const imported = await fetch(`${block.server.url}/backup/import`, {
          method: 'POST',
          headers: { 'content-type': 'application/zip' },
          body: await readFile(join(FIXTURES, file)),
        });
        const importText = await imported.text();
        assert.equal(imported.status, 201, importText);
        const { agentId, agentVersion } = JSON.parse(importText);
        const deployed = await api.post(
          `/administration/production/deploy/${agentId}?version=${agentVersion}&autoDeploy=false&waitForCompletion=true`,
        );
        assert.equal(deployed.status, 200, deployed.text);
        assert.equal(deployed.json.status, 'READY', deployed.text);
        const started = await startConversation(api, agentId);
        assert.notEqual(started.conversationState, 'ERROR', JSON.stringify(started));
        const answered = await sendMessage(api, started.conversationId, 'hello');
        assert.notEqual(answered.conversationState, 'ERROR', JSON.stringify(answered));
      });
    }
  });

  describe(`dictionaries and output sets with a language on ${storeType}`, () => {
    const { api } = serverOfBlock(storeType);

    it('match in a conversation without a lang property: it is English, as in the original service', async () => {
      const create = (path: string, body: unknown) => createResource(api, path, body);
      const english = await create('/regulardictionarystore/regulardictionaries', {
        language: 'en',
        words: [{ word: 'hello', expressions: 'greeting(hello)' }],
      });
      const german = await create('/regulardictionarystore/regulardictionaries', {
        lang: 'de',
        words: [{ word: 'servus', expressions: 'greeting(servus)' }],
      });
      const agentId = await deployAgent(api, {
        extensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              dictionaries: [english, german].map((uri) => ({
                type: 'svc://ai.svc.parser.dictionaries.regular',
                config: { uri },
              })),
            },
            config: {},
          },
          {
            type: 'svc://ai.svc.behavior',
            config: {
              uri: await create('/behaviorstore/behaviorsets', {
                behaviorGroups: [
                  {
                    behaviorRules: [
                      {
                        name: 'Greeting',
                        actions: ['greet'],
                        conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
                      },
                    ],
                  },
                ],
              }),
            },
          },
        ],
        outputSet: {
          language: 'en',
          outputSet: [{ action: 'greet', outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hi!' }] }] }],
        },
      });
      const { conversationId } = await startConversation(api, agentId);
      const hello = await sendMessage(api, conversationId, 'hello');
      assert.deepEqual(hello.conversationOutputs[0].actions, ['greet']);
      assert.deepEqual(hello.conversationOutputs[0].output, ['Hi!']);
      const servus = await sendMessage(api, conversationId, 'servus');
      assert.deepEqual(servus.conversationOutputs[0].actions ?? [], [], 'German words only when lang is de');
      const inGerman = await sendMessage(api, conversationId, 'servus', {
        context: { lang: { type: 'string', value: 'de' } },
      });
      assert.deepEqual(inGerman.conversationOutputs[0].actions, ['greet']);
      assert.equal(inGerman.conversationOutputs[0].output, undefined, 'the English output set is silent in German');
    });
  });
}
