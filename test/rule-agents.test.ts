import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createResource, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/** Agents built only from configuration, through the REST API, behaving as the spec and reference §3–7 say. */

const dictionary = {
  words: [
    { word: 'hello', expressions: 'greeting(hello)' },
    { word: 'hi', expressions: 'greeting(hi)' },
    { word: 'bye', expressions: 'goodbye(bye)' },
    { word: 'weather', expressions: 'weather(request)' },
    { word: 'question', expressions: 'two_options_question(question)' },
  ],
  phrases: [
    { phrase: 'good afternoon', expressions: 'greeting(good_afternoon)' },
    { phrase: 'see you', expressions: 'goodbye(see_you)' },
  ],
};

const rules = {
  behaviorGroups: [
    {
      name: 'Smalltalk',
      behaviorRules: [
        {
          name: 'Welcome',
          actions: ['welcome'],
          conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
        },
        {
          name: 'Greeting',
          actions: ['greet'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
        },
        {
          name: 'Goodbye',
          actions: ['say_goodbye', 'CONVERSATION_END'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'goodbye(*)' } }],
        },
        {
          name: 'Question',
          actions: ['giving_two_options'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'two_options_question(*)' } }],
        },
        {
          name: 'Option one',
          actions: ['chose_option_one'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'quickReply(option1)' } }],
        },
        {
          name: 'Ask city',
          actions: ['ask_for_city'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'weather(*)' } }],
        },
        {
          name: 'City given',
          actions: ['city_given'],
          conditions: [{ type: 'actionmatcher', configs: { actions: 'ask_for_city', occurrence: 'lastStep' } }],
        },
      ],
    },
  ],
};

const properties = {
  setOnActions: [
    {
      actions: ['city_given'],
      setProperties: [
        { name: 'chosenCity', fromObjectPath: 'memory.current.input', scope: 'conversation' },
        { name: 'lastCity', fromObjectPath: 'memory.current.input', scope: 'longTerm' },
      ],
    },
  ],
};

const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
const outputs = {
  outputSet: [
    {
      action: 'welcome',
      timesOccurred: 0,
      outputs: [text('Welcome!{#if properties.lastCity} Last time you asked about {properties.lastCity}.{/if}')],
    },
    { action: 'greet', timesOccurred: 0, outputs: [text('Hi there!')] },
    { action: 'greet', timesOccurred: 1, outputs: [text('Did we already say hi?')] },
    { action: 'say_goodbye', timesOccurred: 0, outputs: [text('See you soon!')] },
    {
      action: 'giving_two_options',
      timesOccurred: 0,
      outputs: [text('Pick one')],
      quickReplies: [
        { value: 'Option 1', expressions: 'quickReply(option1)' },
        { value: 'Option 2', expressions: 'quickReply(option2)' },
      ],
    },
    { action: 'chose_option_one', timesOccurred: 0, outputs: [text('You chose option one.')] },
    { action: 'ask_for_city', timesOccurred: 0, outputs: [text('Which city?')] },
    { action: 'city_given', timesOccurred: 0, outputs: [text('Noted: {properties.chosenCity}.')] },
  ],
};

for (const storeType of storeTypes) {
  describe(`agents built from configuration on ${storeType}`, () => {
    const { api } = serverOfBlock(storeType);
    let agentId: string;

    const create = (path: string, body: unknown) => createResource(api, path, body);

    before(async () => {
      const dictionaryUri = await create('/regulardictionarystore/regulardictionaries', dictionary);
      agentId = await deployAgent(api, {
        extensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryUri } }],
              corrections: [{ type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 2 } }],
            },
            config: {},
          },
          { type: 'svc://ai.svc.behavior', config: { uri: await create('/behaviorstore/behaviorsets', rules) } },
          {
            type: 'svc://ai.svc.property',
            config: { uri: await create('/propertysetterstore/propertysetters', properties) },
          },
          { type: 'svc://ai.svc.output', config: { uri: await create('/outputstore/outputsets', outputs) } },
          { type: 'svc://ai.svc.templating', config: {} },
        ],
      });
    });

    const start = (userId = 'someone') => startConversation(api, agentId, { query: `?userId=${userId}` });
    const say = (conversationId: string, input: string) => sendMessage(api, conversationId, input);

    it('welcomes once, greets on words, phrases and a typo, stays silent on the unknown', async () => {
      const conversation = await start();
      assert.deepEqual(conversation.conversationOutputs[0].actions, ['CONVERSATION_START', 'welcome']);
      assert.deepEqual(conversation.conversationOutputs[0].output, ['Welcome!']);
      const id = conversation.conversationId;
      assert.deepEqual((await say(id, 'hello')).conversationOutputs[0].output, ['Hi there!']);
      const other = (await start()).conversationId;
      assert.deepEqual((await say(other, 'good afternoon')).conversationOutputs[0].actions, ['greet']);
      const third = (await start()).conversationId;
      assert.deepEqual((await say(third, 'helo')).conversationOutputs[0].output, ['Hi there!'], 'a typo is corrected');
      const fourth = (await start()).conversationId;
      const unknown = await say(fourth, 'xylophone');
      assert.equal(unknown.conversationOutputs[0].output, undefined);
      assert.equal(unknown.conversationOutputs[0].actions, undefined);
      const detailed = await api.get(`/agents/${fourth}?returnDetailed=true`);
      assert.equal(detailed.json.conversationOutputs[0].expressions, 'unknown(xylophone)');
    });

    it('answers differently the second time (timesOccurred)', async () => {
      const id = (await start()).conversationId;
      assert.deepEqual((await say(id, 'hi')).conversationOutputs[0].output, ['Hi there!']);
      assert.deepEqual((await say(id, 'hello')).conversationOutputs[0].output, ['Did we already say hi?']);
      assert.deepEqual((await say(id, 'hello')).conversationOutputs[0].output, ['Did we already say hi?']);
    });

    it('asks for a city and remembers it: conversation property, and a long-term one seen in the next conversation of the user', async () => {
      const id = (await start('traveller')).conversationId;
      assert.deepEqual((await say(id, 'weather')).conversationOutputs[0].output, ['Which city?']);
      const answered = await say(id, 'Vienna');
      assert.deepEqual(answered.conversationOutputs[0].actions, ['city_given']);
      assert.deepEqual(answered.conversationOutputs[0].output, ['Noted: Vienna.']);
      assert.deepEqual(answered.conversationProperties.chosenCity, {
        name: 'chosenCity',
        value: 'Vienna',
        scope: 'conversation',
      });
      assert.deepEqual(answered.conversationProperties.lastCity, {
        name: 'lastCity',
        value: 'Vienna',
        scope: 'longTerm',
      });

      const next = await start('traveller');
      assert.deepEqual(next.conversationOutputs[0].output, ['Welcome! Last time you asked about Vienna.']);
      assert.equal(
        next.conversationProperties.chosenCity,
        undefined,
        'conversation properties stay in their conversation',
      );
      const stranger = await start('stranger');
      assert.deepEqual(stranger.conversationOutputs[0].output, ['Welcome!']);
    });

    it('a quick reply clicked by its text triggers its expressions', async () => {
      const id = (await start()).conversationId;
      const question = await say(id, 'question');
      assert.deepEqual(question.conversationOutputs[0].quickReplies, [
        { value: 'Option 1', expressions: 'quickReply(option1)' },
        { value: 'Option 2', expressions: 'quickReply(option2)' },
      ]);
      assert.deepEqual((await say(id, 'Option 1')).conversationOutputs[0].output, ['You chose option one.']);
    });

    it('CONVERSATION_END answers the goodbye, then every message gets 410', async () => {
      const id = (await start()).conversationId;
      const bye = await say(id, 'see you');
      assert.equal(bye.conversationState, 'ENDED');
      assert.deepEqual(bye.conversationOutputs[0].output, ['See you soon!']);
      const after = await api.post(`/agents/${id}`, { json: { input: 'hello' } });
      assert.equal(after.status, 410);
    });
  });
}
