import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { createResource, deployAgent, idFromLocation, sendMessage, startConversation } from './support/agents.ts';
import { type FakeProvider, startFakeOllama, startFakeOpenAi } from './support/fake-llm/index.ts';
import { client } from './support/http.ts';
import { serverOfBlock, startTestServer, storeTypes } from './support/server.ts';

/**
 * The original service's own agent exports (issue 14, `../shared/fixtures/upstream-exports/`): each imports as it is
 * with the default strategy, deploys READY and answers "hello" without ERROR, on both stores.
 */

const FIXTURES = join(import.meta.dirname, '../../shared/fixtures/upstream-exports');

const exportFiles = (await readdir(FIXTURES)).filter((name) => name.endsWith('.zip')).sort();

type Api = ReturnType<typeof client>;

const AGENT_FATHER = '6.0.0__Agent+Father-6.0.0.zip';
const WEATHER = '6.0.0-RC1__weather_bot_v1.zip';
const BOT_FATHER = '5.1.0__Bot+Father-1.0.0.zip';
const BOT_FATHER_3 = '5.4.0__Bot+Father-3.0.0.zip';

/**
 * An export whose HTTP calls target `from` (by default the original service at its default address,
 * `http://localhost:7070`) with that address replaced by `url`: what a user does when this service, or the API an
 * agent calls, is elsewhere (README "Coming from the original service").
 */
async function pointedAt(path: string, url: string, from = 'http://localhost:7070'): Promise<Uint8Array> {
  return rewritten(path, { [from]: url });
}

/** An export with each key of `replacements` replaced by its value in every entry. */
async function rewritten(path: string, replacements: Readonly<Record<string, string>>): Promise<Uint8Array> {
  const files = unzipSync(new Uint8Array(await readFile(path)));
  for (const [name, bytes] of Object.entries(files)) {
    let text = strFromU8(bytes);
    for (const [from, to] of Object.entries(replacements)) text = text.replaceAll(from, to);
    files[name] = strToU8(text);
  }
  return zipSync(files);
}

/** Imports an export with the default strategy and deploys its agent; answers the agent id. */
async function importAndDeploy(baseUrl: string, api: Api, zip: Uint8Array): Promise<string> {
  const imported = await fetch(`${baseUrl}/backup/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip' },
    body: zip,
  });
  const importText = await imported.text();
  assert.equal(imported.status, 201, importText);
  const { agentId, agentVersion } = JSON.parse(importText);
  const deployed = await api.post(
    `/administration/production/deploy/${agentId}?version=${agentVersion}&autoDeploy=false&waitForCompletion=true`,
  );
  assert.equal(deployed.status, 200, deployed.text);
  assert.equal(deployed.json.status, 'READY', deployed.text);
  return agentId;
}

for (const storeType of storeTypes) {
  describe(`the original service's exports on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;

    it('finds the ten exports', () => assert.equal(exportFiles.length, 10));

    for (const file of exportFiles) {
      it(`${file}: imports, deploys READY and answers "hello"`, async () => {
        const zip = new Uint8Array(await readFile(join(FIXTURES, file)));
        const agentId = await importAndDeploy(block.server.url, api, zip);
        const started = await startConversation(api, agentId);
        assert.notEqual(started.conversationState, 'ERROR', JSON.stringify(started));
        const answered = await sendMessage(api, started.conversationId, 'hello');
        assert.notEqual(answered.conversationState, 'ERROR', JSON.stringify(answered));
      });
    }
  });

  describe(`the agents that build agents on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let ollama: FakeProvider;
    let openAi: FakeProvider;
    before(async () => {
      ollama = await startFakeOllama();
      openAi = await startFakeOpenAi();
    });
    after(async () => {
      await ollama?.close();
      await openAi?.close();
    });

    it("reads this service's answers as the Bot Fathers do: EDDIResponseHeader.Location", async () => {
      const create = (path: string, body: unknown) => createResource(api, path, body);
      const calls = await create('/httpcallsstore/httpcalls', {
        targetServerUrl: block.server.url,
        httpCalls: [
          {
            name: 'Create output',
            actions: ['create_output'],
            saveResponse: true,
            responseObjectName: 'EDDIResponse',
            responseHeaderObjectName: 'EDDIResponseHeader',
            request: {
              path: '/outputstore/outputsets',
              method: 'post',
              contentType: 'application/json',
              body: '{"outputSet": []}',
            },
            postResponse: {
              propertyInstructions: [
                { name: 'outputSetLocation', scope: 'conversation', fromObjectPath: 'EDDIResponseHeader.Location' },
              ],
            },
          },
        ],
      });
      const rules = await create('/behaviorstore/behaviorsets', {
        behaviorGroups: [
          {
            behaviorRules: [
              {
                name: 'Create',
                actions: ['create_output'],
                conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Create' } }],
              },
            ],
          },
        ],
      });
      const agentId = await deployAgent(api, {
        extensions: [
          { type: 'svc://ai.svc.behavior', config: { uri: rules } },
          { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
        ],
      });
      const started = await startConversation(api, agentId);
      assert.equal(started.conversationState, 'READY', JSON.stringify(started));
      assert.match(
        String(started.conversationProperties.outputSetLocation?.value),
        /^svc:\/\/ai\.svc\.output\/outputstore\/outputsets\/[0-9a-f]{24}\?version=1$/,
        JSON.stringify(started),
      );
    });

    it('Bot Father 1.0 creates, names and deploys an agent here (its HTTP calls pointed at this service)', async () => {
      const zip = await rewritten(join(FIXTURES, BOT_FATHER), {
        'http://localhost:7070': block.server.url,
        'https://api.openai.com/v1': `${openAi.url}/v1`,
      });
      const agentId = await importAndDeploy(block.server.url, api, zip);
      const { conversationId } = await startConversation(api, agentId);
      const say = (input: string) => sendMessage(api, conversationId, input);
      for (const input of [
        "Let's get started!",
        'Helper',
        'You help people.',
        'Hi, I am Helper.',
        'sk-bot-father-test',
      ]) {
        assert.equal((await say(input)).conversationState, 'READY');
      }
      const created = await say('Create the bot!');
      assert.equal(created.conversationState, 'ENDED', JSON.stringify(created));
      assert.match(String(created.conversationOutputs[0].output), /Your bot "Helper" was successfully created/);

      const made = (await api.get('/agentstore/agents/descriptors?filter=Helper')).json;
      assert.equal(made.length, 1, JSON.stringify(made));
      const newAgent = (await api.get(`/agentstore/agents/${idFromLocation(made[0].resource)}?version=1`)).json;
      assert.equal(newAgent.packages.length, 1);
      const stores = ['/propertysetterstore/propertysetters', '/behaviorstore/behaviorsets', '/outputstore/outputsets'];
      for (const store of [...stores, '/httpcallsstore/httpcalls', '/packagestore/packages']) {
        const named = (await api.get(`${store}/descriptors?filter=Helper`)).json;
        assert.equal(named.length, 1, `${store}: ${JSON.stringify(named)}`);
      }
      const calls = (await api.get('/httpcallsstore/httpcalls/descriptors?filter=Helper')).json[0].resource;
      const written = (await api.get(`/httpcallsstore/httpcalls/${idFromLocation(calls)}?version=1`)).json;
      assert.equal(written.targetServerUrl, '{properties.chatGptApi}', 'the templates it writes arrive as templates');
      assert.equal(written.httpCalls[0].request.headers.authorization, 'Bearer {properties.chatGptToken}');
    });

    it('Bot Father 3.0 creates a working Ollama agent here', async () => {
      const local = await startTestServer(storeType, { 'svc.ollama.default-base-url': ollama.url });
      try {
        const localApi = client(() => local.url);
        const zip = await pointedAt(join(FIXTURES, BOT_FATHER_3), local.url);
        const agentId = await importAndDeploy(local.url, localApi, zip);
        const { conversationId } = await startConversation(localApi, agentId);
        const say = (input: string) => sendMessage(localApi, conversationId, input);
        for (const input of ["Let's get started!", 'Porter', 'You carry luggage.', 'Hello, I am Porter.', 'Ollama']) {
          assert.equal((await say(input)).conversationState, 'READY');
        }
        await say('llama3.2');
        await say('30000');
        const created = await say('Create the bot!');
        assert.equal(created.conversationState, 'ENDED', JSON.stringify(created));
        assert.match(String(created.conversationOutputs[0].output), /Your bot "Porter" was successfully created/);

        const made = (await localApi.get('/agentstore/agents/descriptors?filter=Porter')).json;
        assert.equal(made.length, 1, JSON.stringify(made));
        const porter = idFromLocation(made[0].resource);
        const status = await localApi.get(
          `/administration/production/deploymentstatus/${porter}?version=1&format=json`,
        );
        assert.equal(status.json.status, 'READY', status.text);
        ollama.reset();
        ollama.reply({ text: 'Welcome aboard.' }); // its LLM task runs on every action ('*'), the start too
        const chat = await startConversation(localApi, porter);
        assert.deepEqual(chat.conversationOutputs.at(-1).output, ['Welcome aboard.', 'Hello, I am Porter.']);
        ollama.reply({ text: 'Your bags are on the way.' });
        const answered = await sendMessage(localApi, chat.conversationId, 'Where are my bags?');
        assert.deepEqual(
          answered.conversationOutputs[0].output,
          ['Your bags are on the way.'],
          JSON.stringify(answered),
        );
        assert.equal(ollama.requests.at(-1)!.body.model, 'llama3.2');
      } finally {
        await local.dispose();
      }
    });

    it('the agent Bot Father 1.0 creates talks to ChatGPT: its request carries the conversation log', async () => {
      // Its HTTP call sets a property from `json.serialize(conversationLog.generate().toObject())` and cuts it with
      // `#strings.substring(log, 1, #strings.length(log)-2)` into the request's messages: the conversation log
      // template object and arithmetic in templates.
      const made = (await api.get('/agentstore/agents/descriptors?filter=Helper')).json;
      assert.equal(made.length, 1);
      const helper = idFromLocation(made[0].resource);
      const deployed = await api.post(`/administration/production/deploy/${helper}?version=1&waitForCompletion=true`);
      assert.equal(deployed.json.status, 'READY', deployed.text);
      openAi.reset();
      const chat = await startConversation(api, helper);
      openAi.reply({ text: 'I can help you.' });
      const answered = await sendMessage(api, chat.conversationId, 'What can you do?');
      assert.equal(answered.conversationState, 'READY', JSON.stringify(answered));
      assert.deepEqual(answered.conversationOutputs[0].output, ['I can help you.'], JSON.stringify(answered));
      const sent = openAi.requests.at(-1)!;
      assert.equal(sent.headers.authorization, 'Bearer sk-bot-father-test');
      assert.match(sent.rawBody, /^\{"model":"[^"]+","messages":\[\{"role":"system","content":"You help people."\},/);
      assert.match(sent.rawBody, /\{"role":"user","content":"What can you do\?"/);
    });

    it('Agent Father 6.0 creates and deploys a working agent here (its HTTP call pointed at this service)', async () => {
      const zip = await pointedAt(join(FIXTURES, AGENT_FATHER), block.server.url);
      const agentId = await importAndDeploy(block.server.url, api, zip);
      const { conversationId } = await startConversation(api, agentId);
      const say = (input: string) => sendMessage(api, conversationId, input);
      assert.deepEqual((await say('hello')).conversationOutputs[0].actions, ['ask_for_agent_name', 'unknown']);
      await say('Trip Planner');
      await say('You plan trips.');
      await say('Skip — no intro message');
      await say('Ollama (local)');
      await say(ollama.url);
      await say('llama3.2:1b');
      const created = await say('✅ Create & Deploy');
      assert.equal(created.conversationState, 'ENDED', JSON.stringify(created));
      assert.match(String(created.conversationOutputs[0].output), /Trip Planner.*has been created and deployed/);

      const made = (await api.get('/agentstore/agents/descriptors?filter=Trip%20Planner')).json;
      assert.equal(made.length, 1, JSON.stringify(made));
      const newAgentId = idFromLocation(made[0].resource);
      const status = await api.get(`/administration/production/deploymentstatus/${newAgentId}?version=1&format=json`);
      assert.equal(status.json.status, 'READY', status.text);
      const chat = await startConversation(api, newAgentId);
      ollama.reply({ text: 'Go to Porto.' });
      const answered = await sendMessage(api, chat.conversationId, 'Where to?');
      assert.deepEqual(answered.conversationOutputs[0].output, ['Go to Porto.']);
    });
  });

  describe(`the weather agent on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;
    let weatherApi: Server;
    const asked: string[] = [];
    before(async () => {
      weatherApi = createServer((request, response) => {
        asked.push(request.url!);
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ weather: [{ description: 'clear sky' }], main: { temp: 21.5 } }));
      });
      await new Promise<void>((resolve) => weatherApi.listen(0, '127.0.0.1', resolve));
    });
    after(() => weatherApi?.close());

    const converse = async (zip: Uint8Array) => {
      const agentId = await importAndDeploy(block.server.url, api, zip);
      const { conversationId } = await startConversation(api, agentId);
      const weather = await sendMessage(api, conversationId, 'weather');
      assert.deepEqual(weather.conversationOutputs[0].output, ['Which City would you like to know the weather of?']);
      return sendMessage(api, conversationId, 'Vienna');
    };

    it('asks its first question; its call to the outside API fails as a turn ERROR with the reason', async () => {
      const vienna = await converse(new Uint8Array(await readFile(join(FIXTURES, WEATHER))));
      assert.equal(vienna.conversationState, 'ERROR', JSON.stringify(vienna));
      assert.match(vienna.conversationOutputs[0].error, /HTTP call 'currentWeather'/);
    });

    it('pointed at a loopback fake of the weather API, answers with the weather', async () => {
      const fakeUrl = `http://127.0.0.1:${(weatherApi.address() as AddressInfo).port}/data/2.5/weather`;
      const zip = await pointedAt(join(FIXTURES, WEATHER), fakeUrl, 'https://api.openweathermap.org/data/2.5/weather');
      const vienna = await converse(zip);
      assert.equal(vienna.conversationState, 'READY', JSON.stringify(vienna));
      assert.deepEqual(vienna.conversationOutputs[0].output, [
        'The current weather situation of Vienna is clear sky at 21.5 °C',
      ]);
      assert.match(asked.at(-1)!, /[?&]q=Vienna(&|$)/);
    });
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
