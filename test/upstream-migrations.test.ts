import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { createResource, deploy, idFromLocation, sendMessage, startConversation } from './support/agents.ts';
import { serverOfBlock } from './support/server.ts';

/**
 * Bodies written as the original service's releases 4.x and 5.x wrote them (DESIGN §4.23) are migrated on input,
 * through the stores and through a ZIP import alike, so that the agent they make deploys and answers. The spelling
 * of references (`eddi://ai.labs.*`) is another migration's; these bodies use ours to test only the fields.
 */

const dictionary = { words: [{ word: 'hello', expressions: 'greeting(hello)' }] };

/** Rules of release 4.x: `children` instead of `conditions`, `values` instead of `configs`. */
const rules = {
  behaviorGroups: [
    {
      name: 'Smalltalk',
      behaviorRules: [
        {
          name: 'Greeting',
          actions: ['greet'],
          children: [{ type: 'inputmatcher', values: { expressions: 'greeting(*)', occurrence: 'currentStep' } }],
        },
        {
          name: 'Welcome',
          actions: ['welcome'],
          children: [{ type: 'occurrence', values: { maxTimesOccurred: 0, behaviorRuleName: 'Welcome' } }],
        },
      ],
    },
  ],
};

/** A property setter of release 4.x: an untyped `value`. */
const properties = {
  setOnActions: [
    { actions: ['greet'], setProperties: [{ name: 'botName', value: 'My Fine Bot', scope: 'conversation' }] },
  ],
};

/** Outputs of releases 4.x/5.x: a `type` per output position, quick replies' `default`, Thymeleaf and `#strings`. */
const outputs = {
  outputSet: [
    {
      action: 'greet',
      timesOccurred: '0',
      outputs: [
        {
          type: 'text',
          valueAlternatives: ["Hi, I am [[${#strings.toLowerCase(#strings.replace(properties.botName, ' ', '-'))}]]"],
        },
      ],
      quickReplies: [{ value: 'Bye', expressions: 'goodbye(bye)', default: false }],
    },
  ],
};

function workflow(dictionaryUri: string, rulesUri: string, propertyUri: string, outputUri: string) {
  return {
    packageExtensions: [
      {
        type: 'svc://ai.svc.parser',
        extensions: {
          dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryUri } }],
          corrections: [
            {
              type: 'svc://ai.svc.parser.corrections.stemming',
              config: { language: 'english', lookupIfKnown: 'false' },
            },
            { type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: '2' } },
          ],
        },
        config: {},
      },
      { type: 'svc://ai.svc.behavior', config: { uri: rulesUri } },
      { type: 'svc://ai.svc.property', config: { uri: propertyUri } },
      { type: 'svc://ai.svc.output', config: { uri: outputUri } },
      { type: 'svc://ai.svc.templating' },
    ],
  };
}

/** An agent of release 4.x, with the Git backup settings that later releases dropped. */
const agent = (workflowUri: string) => ({
  packages: [workflowUri],
  channels: [],
  gitBackupSettings: { isAutoPush: false, repositoryUrl: null, branch: null, username: null, password: null },
});

async function talk(api: ReturnType<typeof serverOfBlock>['api'], agentId: string) {
  await deploy(api, agentId);
  const { conversationId } = await startConversation(api, agentId);
  const answer = await sendMessage(api, conversationId, 'helo');
  assert.equal(answer.conversationState, 'READY', JSON.stringify(answer));
  return answer;
}

describe("the original service's older fields are migrated on input", () => {
  const block = serverOfBlock('sqlite');
  const { api } = block;

  it('through the stores: the agent deploys and answers; GET returns our form', async () => {
    const dictionaryUri = await createResource(api, '/regulardictionarystore/regulardictionaries', dictionary);
    const rulesUri = await createResource(api, '/behaviorstore/behaviorsets', rules);
    const propertyUri = await createResource(api, '/propertysetterstore/propertysetters', properties);
    const outputUri = await createResource(api, '/outputstore/outputsets', outputs);
    const workflowUri = await createResource(
      api,
      '/packagestore/packages',
      workflow(dictionaryUri, rulesUri, propertyUri, outputUri),
    );
    const agentId = idFromLocation(await createResource(api, '/agentstore/agents', agent(workflowUri)));

    const answer = await talk(api, agentId);
    assert.deepEqual(answer.conversationOutputs.at(-1).output, ['Hi, I am my-fine-bot']);

    const storedRules = await api.get(`/behaviorstore/behaviorsets/${idFromLocation(rulesUri)}?version=1`);
    assert.deepEqual(storedRules.json.behaviorGroups[0].behaviorRules[1].conditions, [
      { type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } },
    ]);
    const storedOutputs = await api.get(`/outputstore/outputsets/${idFromLocation(outputUri)}?version=1`);
    assert.deepEqual(storedOutputs.json.outputSet[0], {
      action: 'greet',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: ["Hi, I am {properties.botName.replace(' ', '-').toLowerCase()}"] }],
      quickReplies: [{ value: 'Bye', expressions: 'goodbye(bye)', isDefault: false }],
    });
    const storedAgent = await api.get(`/agentstore/agents/${agentId}?version=1`);
    assert.equal(storedAgent.json.gitBackupSettings, undefined);
  });

  it('through a ZIP import: the same bodies import, deploy and answer', async () => {
    const id = (n: number) => `5a27c5df07200a457c31b4${n.toString(16).padStart(2, '0')}`;
    const ref = (type: string, store: string, n: number) => `svc://ai.svc.${type}/${store}/${id(n)}?version=1`;
    const dictionaryUri = ref('regulardictionary', 'regulardictionarystore/regulardictionaries', 1);
    const rulesUri = ref('behavior', 'behaviorstore/behaviorsets', 2);
    const propertyUri = ref('property', 'propertysetterstore/propertysetters', 3);
    const outputUri = ref('output', 'outputstore/outputsets', 4);
    const workflowUri = ref('package', 'packagestore/packages', 5);
    const json = (value: unknown) => strToU8(JSON.stringify(value));
    const folder = `${id(5)}/1`;
    const zip = zipSync({
      [`${id(6)}.bot.json`]: json(agent(workflowUri)),
      [`${folder}/${id(5)}.package.json`]: json(workflow(dictionaryUri, rulesUri, propertyUri, outputUri)),
      [`${folder}/${id(1)}.regulardictionary.json`]: json(dictionary),
      [`${folder}/${id(2)}.behavior.json`]: json(rules),
      [`${folder}/${id(3)}.property.json`]: json(properties),
      [`${folder}/${id(4)}.output.json`]: json(outputs),
    });
    const imported = await fetch(`${block.server.url}/backup/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: zip,
    });
    const importText = await imported.text();
    assert.equal(imported.status, 201, importText);
    const answer = await talk(api, JSON.parse(importText).agentId);
    assert.deepEqual(answer.conversationOutputs.at(-1).output, ['Hi, I am my-fine-bot']);
  });

  it('our own format stays strict: an unknown field is still a 400 naming it', async () => {
    const answer = await api.post('/agentstore/agents', { json: { packages: [], gitBackupSetting: {} } });
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.json.detail, /gitBackupSetting/);
    const text = await api.post('/packagestore/packages', {
      json: {
        packageExtensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              corrections: [{ type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 'far' } }],
            },
          },
        ],
      },
    });
    assert.equal(text.status, 400, text.text);
  });
});
