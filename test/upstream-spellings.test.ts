import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { createResource, deploy, idFromLocation, sendMessage, startConversation } from './support/agents.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';

/**
 * The original service's spelling (DESIGN §4.22, issue 14 item 1): `eddi://ai.labs.<type>/...` and every older type
 * name is accepted wherever `svc://ai.svc.<type>/...` is, and stored and returned in ours.
 */

const greetingOutputs = {
  outputSet: [
    {
      action: 'greet',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello from the original!' }] }],
    },
  ],
};
const greetingRules = {
  behaviorGroups: [
    {
      name: 'Main',
      behaviorRules: [
        {
          name: 'Greeting',
          actions: ['greet'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
        },
      ],
    },
  ],
};
const greetingWords = { words: [{ word: 'hello', expressions: 'greeting(hello)' }], phrases: [] };

/** A reference in the original's spelling, with the given (older) type host and store path. */
const eddi = (typeAndPath: string, location: string) =>
  `eddi://ai.labs.${typeAndPath}/${idFromLocation(location)}?version=1`;

for (const storeType of storeTypes) {
  describe(`the original service's spelling on ${storeType}`, () => {
    const block = serverOfBlock(storeType);
    const { api } = block;

    it('a workflow and an agent written with eddi://ai.labs.* everywhere are stored as svc://ai.svc.*, deploy and answer', async () => {
      const dictionary = await createResource(api, '/regulardictionarystore/regulardictionaries', greetingWords);
      const rules = await createResource(api, '/behaviorstore/behaviorsets', greetingRules);
      const outputs = await createResource(api, '/outputstore/outputsets', greetingOutputs);
      const properties = await createResource(api, '/propertysetterstore/propertysetters', {
        setOnActions: [
          { actions: ['greet'], setProperties: [{ name: 'greeted', valueString: 'yes', scope: 'conversation' }] },
        ],
      });
      const workflow = await createResource(api, '/packagestore/packages', {
        packageExtensions: [
          {
            type: 'eddi://ai.labs.parser',
            extensions: {
              dictionaries: [
                {
                  type: 'eddi://ai.labs.parser.dictionaries.regular',
                  config: { uri: eddi('dictionary/dictionarystore/dictionaries', dictionary) },
                },
                { type: 'eddi://ai.labs.parser.dictionaries.integer' },
              ],
              corrections: [{ type: 'eddi://ai.labs.parser.corrections.levenshtein', config: { distance: 2 } }],
              normalizer: [{ type: 'eddi://ai.labs.parser.normalizers.punctuation' }],
            },
            config: {},
          },
          { type: 'eddi://ai.labs.rules', config: { uri: eddi('rules/rulestore/rulesets', rules) } },
          {
            type: 'eddi://ai.labs.property',
            config: { uri: eddi('property/propertysetterstore/propertysetters', properties) },
          },
          { type: 'eddi://ai.labs.output', config: { uri: eddi('output/outputstore/outputsets', outputs) } },
          { type: 'eddi://ai.labs.templating', config: {} },
        ],
      });
      const workflowId = idFromLocation(workflow);
      const agent = await createResource(api, '/botstore/bots', {
        packages: [eddi('package/packagestore/packages', workflow)],
        channels: [{ type: 'eddi://ai.labs.channel.test' }],
      });
      const agentId = idFromLocation(agent);
      assert.equal(agent, `svc://ai.svc.agent/agentstore/agents/${agentId}?version=1`);

      const storedWorkflow = await api.get(`/packagestore/packages/${workflowId}?version=1`);
      assert.equal(storedWorkflow.status, 200, storedWorkflow.text);
      assert.doesNotMatch(storedWorkflow.text, /eddi:|ai\.labs/);
      const steps = storedWorkflow.json.packageExtensions;
      assert.deepEqual(
        steps.map((step: { type: string }) => step.type),
        [
          'svc://ai.svc.parser',
          'svc://ai.svc.behavior',
          'svc://ai.svc.property',
          'svc://ai.svc.output',
          'svc://ai.svc.templating',
        ],
      );
      assert.deepEqual(steps[0].extensions.dictionaries, [
        { type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionary } },
        { type: 'svc://ai.svc.parser.dictionaries.integer' },
      ]);
      assert.equal(steps[0].extensions.corrections[0].type, 'svc://ai.svc.parser.corrections.levenshtein');
      assert.equal(steps[0].extensions.normalizer[0].type, 'svc://ai.svc.parser.normalizers.punctuation');
      assert.equal(steps[1].config.uri, rules);
      assert.equal(steps[2].config.uri, properties);
      assert.equal(steps[3].config.uri, outputs);

      const storedAgent = await api.get(`/agentstore/agents/${agentId}?version=1`);
      assert.equal(storedAgent.status, 200, storedAgent.text);
      assert.deepEqual(storedAgent.json, {
        packages: [workflow],
        channels: [{ type: 'svc://ai.svc.channel.test' }],
      });

      await deploy(api, agentId);
      const started = await startConversation(api, agentId);
      const answered = await sendMessage(api, started.conversationId, 'Hello!');
      assert.notEqual(answered.conversationState, 'ERROR', JSON.stringify(answered));
      assert.deepEqual(answered.conversationOutputs.at(-1).output, ['Hello from the original!']);
    });

    it('6.x names in the original spelling: workflows, workflow and llm hosts, LLM tools', async () => {
      const rules = await createResource(api, '/rulestore/rulesets', greetingRules);
      const calls = await createResource(api, '/apicallstore/apicalls', {
        targetServerUrl: 'http://127.0.0.1:9',
        httpCalls: [{ name: 'lookup', actions: ['lookup'], request: { method: 'GET', path: '/' } }],
      });
      const llm = await createResource(api, '/llmstore/llms', {
        tasks: [
          {
            actions: ['ask'],
            id: 'assistant',
            type: 'openai',
            tools: [eddi('apicalls/apicallstore/apicalls', calls)],
            parameters: { apiKey: '${vault:OPENAI_API_KEY}', modelName: 'gpt-4o-mini' },
          },
        ],
      });
      const storedLlm = await api.get(`/llmstore/llms/${idFromLocation(llm)}?version=1`);
      assert.equal(storedLlm.status, 200, storedLlm.text);
      assert.deepEqual(storedLlm.json.tasks[0].tools, [calls]);

      const workflow = await createResource(api, '/workflowstore/workflows', {
        workflowSteps: [
          { type: 'eddi://ai.labs.behavior', config: { uri: eddi('rules/rulestore/rulesets', rules) } },
          { type: 'eddi://ai.labs.apicalls', config: { uri: eddi('apicalls/apicallstore/apicalls', calls) } },
          { type: 'eddi://ai.labs.langchain', config: { uri: eddi('langchain/langchainstore/langchains', llm) } },
        ],
      });
      const stored = await api.get(`/packagestore/packages/${idFromLocation(workflow)}?version=1`);
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(stored.json.packageExtensions, [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
        { type: 'svc://ai.svc.llm', config: { uri: llm } },
      ]);
      const agent = await createResource(api, '/agentstore/agents', {
        workflows: [eddi('workflow/workflowstore/workflows', workflow)],
      });
      const storedAgent = await api.get(`/agentstore/agents/${idFromLocation(agent)}?version=1`);
      assert.deepEqual(storedAgent.json, { packages: [workflow] });
    });

    it('a reference or type in a spelling that mixes the two is refused with a 400 naming it', async () => {
      const outputs = await createResource(api, '/outputstore/outputsets', greetingOutputs);
      const mixed = `eddi://ai.svc.output/outputstore/outputsets/${idFromLocation(outputs)}?version=1`;
      const refused = await api.post('/packagestore/packages', {
        json: { packageExtensions: [{ type: 'eddi://ai.labs.output', config: { uri: mixed } }] },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.json.detail, /packageExtensions\[0\]\.config\.uri/);
      const badType = await api.post('/packagestore/packages', {
        json: { packageExtensions: [{ type: 'svc://ai.labs.output', config: { uri: outputs } }] },
      });
      assert.equal(badType.status, 400, badType.text);
      assert.match(badType.json.detail, /svc:\/\/ai\.labs\.output/);
    });

    it('a ZIP written on Windows (\\ in entry names), with the older file names and spelling, imports and answers', async () => {
      const agentId = 'aaa000000000000000000010';
      const workflowId = 'aaa000000000000000000011';
      const outputId = 'aaa000000000000000000012';
      const rulesId = 'aaa000000000000000000013';
      const dictionaryId = 'aaa000000000000000000014';
      const folder = `${workflowId}\\1\\`;
      const json = (value: unknown) => strToU8(JSON.stringify(value));
      const zip = zipSync({
        [`${agentId}.bot.json`]: json({
          packages: [`eddi://ai.labs.package/packagestore/packages/${workflowId}?version=1`],
          channels: [],
        }),
        [`${agentId}.descriptor.json`]: json({
          resource: `eddi://ai.labs.bot/botstore/bots/${agentId}?version=1`,
          name: 'Windows bot',
          description: '',
        }),
        [`${folder}${workflowId}.package.json`]: json({
          packageExtensions: [
            {
              type: 'eddi://ai.labs.parser',
              extensions: {
                dictionaries: [
                  {
                    type: 'eddi://ai.labs.parser.dictionaries.regular',
                    config: {
                      uri: `eddi://ai.labs.regulardictionary/regulardictionarystore/regulardictionaries/${dictionaryId}?version=1`,
                    },
                  },
                ],
              },
              config: {},
            },
            {
              type: 'eddi://ai.labs.behavior',
              config: { uri: `eddi://ai.labs.behavior/behaviorstore/behaviorsets/${rulesId}?version=1` },
            },
            {
              type: 'eddi://ai.labs.output',
              config: { uri: `eddi://ai.labs.output/outputstore/outputsets/${outputId}?version=1` },
            },
          ],
        }),
        [`${folder}${workflowId}.descriptor.json`]: json({ name: 'Main', description: '' }),
        [`${folder}${dictionaryId}.regulardictionary.json`]: json(greetingWords),
        [`${folder}${rulesId}.behavior.json`]: json(greetingRules),
        [`${folder}${outputId}.output.json`]: json(greetingOutputs),
      });
      const imported = await fetch(`${block.server.url}/backup/import`, {
        method: 'POST',
        headers: { 'content-type': 'application/zip' },
        body: zip,
      });
      const importText = await imported.text();
      assert.equal(imported.status, 201, importText);
      const { agentId: newAgentId, agentVersion } = JSON.parse(importText);
      const storedAgent = await api.get(`/agentstore/agents/${newAgentId}?version=${agentVersion}`);
      assert.match(
        storedAgent.json.packages[0],
        /^svc:\/\/ai\.svc\.package\/packagestore\/packages\/[0-9a-f]{24}\?version=1$/,
      );
      const storedWorkflow = await api.get(storedAgent.json.packages[0].replace(/^svc:\/\/ai\.svc\.package/, ''));
      assert.equal(storedWorkflow.status, 200, storedWorkflow.text);
      assert.doesNotMatch(storedWorkflow.text, /eddi:|ai\.labs/);

      await deploy(api, newAgentId, agentVersion);
      const started = await startConversation(api, newAgentId);
      const answered = await sendMessage(api, started.conversationId, 'hello');
      assert.deepEqual(answered.conversationOutputs.at(-1).output, ['Hello from the original!']);
    });

    it('ZIP entry names that climb out or are absolute are refused, also written with \\', async () => {
      for (const name of ['..\\evil.bot.json', 'a\\..\\..\\evil.bot.json', '\\evil.bot.json', 'C:\\evil.bot.json']) {
        const zip = zipSync({ [name]: strToU8('{"packages":[]}') });
        const refused = await fetch(`${block.server.url}/backup/import`, {
          method: 'POST',
          headers: { 'content-type': 'application/zip' },
          body: zip,
        });
        assert.equal(refused.status, 400, name);
        assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
        const problem = (await refused.json()) as { detail: string };
        assert.ok(problem.detail.includes(`'${name}' is refused`), problem.detail);
      }
    });
  });
}
