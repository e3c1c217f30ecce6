import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalExtensionType, formatReference, parseExtensionType, parseReference, splitReference } from './uri.ts';

const ID = '5a27c5df07200a457c31b496';

describe('references in both spellings (DESIGN §4.22)', () => {
  it('reads ours: svc://ai.svc.<type>/<store path>/<id>?version=<n>', () => {
    assert.deepEqual(parseReference(`svc://ai.svc.package/packagestore/packages/${ID}?version=3`), {
      type: 'package',
      id: ID,
      version: 3,
    });
  });

  it("reads the original's: eddi://ai.labs.<type>/... with every older type host", () => {
    for (const [uri, type] of [
      [`eddi://ai.labs.package/packagestore/packages/${ID}?version=1`, 'package'],
      [`eddi://ai.labs.workflow/workflowstore/workflows/${ID}?version=1`, 'workflow'],
      [`eddi://ai.labs.bot/botstore/bots/${ID}?version=1`, 'bot'],
      [`eddi://ai.labs.agent/agentstore/agents/${ID}?version=1`, 'agent'],
      [
        `eddi://ai.labs.regulardictionary/regulardictionarystore/regulardictionaries/${ID}?version=1`,
        'regulardictionary',
      ],
      [`eddi://ai.labs.dictionary/dictionarystore/dictionaries/${ID}?version=1`, 'dictionary'],
      [`eddi://ai.labs.behavior/behaviorstore/behaviorsets/${ID}?version=1`, 'behavior'],
      [`eddi://ai.labs.rules/rulestore/rulesets/${ID}?version=1`, 'rules'],
      [`eddi://ai.labs.httpcalls/httpcallsstore/httpcalls/${ID}?version=1`, 'httpcalls'],
      [`eddi://ai.labs.apicalls/apicallstore/apicalls/${ID}?version=1`, 'apicalls'],
      [`eddi://ai.labs.langchain/langchainstore/langchains/${ID}?version=1`, 'langchain'],
      [`eddi://ai.labs.llm/llmstore/llms/${ID}?version=1`, 'llm'],
      [`eddi://ai.labs.output/outputstore/outputsets/${ID}?version=1`, 'output'],
      [`eddi://ai.labs.property/propertysetterstore/propertysetters/${ID}?version=1`, 'property'],
    ] as const) {
      assert.deepEqual(parseReference(uri), { type, id: ID, version: 1 }, uri);
    }
  });

  it('refuses mixed spellings, other schemes, bad ids and versions', () => {
    for (const uri of [
      `eddi://ai.svc.package/packagestore/packages/${ID}?version=1`,
      `svc://ai.labs.package/packagestore/packages/${ID}?version=1`,
      `http://ai.labs.package/packagestore/packages/${ID}?version=1`,
      `ai.labs.package/packagestore/packages/${ID}?version=1`,
      `eddi://ai.labs.package/packagestore/packages/${ID}`,
      `eddi://ai.labs.package/packagestore/packages/${ID}?version=0`,
      `eddi://ai.labs.package/packagestore/packages/${ID}?version=99999999999999999999`,
      `eddi://ai.labs.package/packagestore/packages/NOT-AN-ID?version=1`,
    ]) {
      assert.equal(parseReference(uri), undefined, uri);
    }
  });

  it('splits a reference with an id of another store, in either spelling', () => {
    const uuid = '0b7e9f7c-4a1e-4e2b-9d1a-2f3c4d5e6f70';
    assert.deepEqual(splitReference(`eddi://ai.labs.rules/rulestore/rulesets/${uuid}?version=2`), {
      type: 'rules',
      id: uuid,
      version: 2,
    });
    assert.equal(parseReference(`eddi://ai.labs.rules/rulestore/rulesets/${uuid}?version=2`), undefined);
  });

  it('writes only ours', () => {
    assert.equal(
      formatReference('package', '/packagestore/packages', ID, 2),
      `svc://ai.svc.package/packagestore/packages/${ID}?version=2`,
    );
  });
});

describe('task and extension types in both spellings', () => {
  it('reads every step, dictionary, correction and normalizer type as its id in our namespace', () => {
    for (const name of [
      'parser',
      'rules',
      'behavior',
      'output',
      'property',
      'httpcalls',
      'apicalls',
      'llm',
      'langchain',
      'templating',
      'parser.dictionaries.regular',
      'parser.dictionaries.integer',
      'parser.corrections.levenshtein',
      'parser.corrections.mergedTerms',
      'parser.normalizers.punctuation',
      'channel.facebook',
    ]) {
      assert.equal(parseExtensionType(`eddi://ai.labs.${name}`), `ai.svc.${name}`, name);
      assert.equal(parseExtensionType(`svc://ai.svc.${name}`), `ai.svc.${name}`, name);
      assert.equal(canonicalExtensionType(`eddi://ai.labs.${name}`), `svc://ai.svc.${name}`, name);
      assert.equal(canonicalExtensionType(`svc://ai.svc.${name}`), `svc://ai.svc.${name}`, name);
    }
  });

  it('leaves what is not a type as it is', () => {
    for (const type of [
      'ai.labs.parser',
      'eddi://ai.labs.parser/x',
      'eddi://ai.svc.parser',
      'svc://ai.labs.parser',
      '',
    ]) {
      assert.equal(parseExtensionType(type), undefined, type);
      assert.equal(canonicalExtensionType(type), type, type);
    }
    assert.equal(canonicalExtensionType(42), 42);
    assert.equal(canonicalExtensionType(null), null);
  });
});
