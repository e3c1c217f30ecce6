import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rewriteLegacyPath } from './legacy-paths.ts';

test('upstream store paths are rewritten to the spec paths', () => {
  assert.equal(rewriteLegacyPath('/rulestore/rulesets'), '/behaviorstore/behaviorsets');
  assert.equal(rewriteLegacyPath('/rulestore/rulesets/abc?version=1'), '/behaviorstore/behaviorsets/abc?version=1');
  assert.equal(rewriteLegacyPath('/workflowstore/workflows/descriptors'), '/packagestore/packages/descriptors');
  assert.equal(
    rewriteLegacyPath('/dictionarystore/dictionaries?x=1'),
    '/regulardictionarystore/regulardictionaries?x=1',
  );
  assert.equal(rewriteLegacyPath('/llmstore/llms'), '/langchainstore/langchains');
  assert.equal(rewriteLegacyPath('/apicallstore/apicalls'), '/httpcallsstore/httpcalls');
  assert.equal(rewriteLegacyPath('/langchain/tools/costs'), '/llm/tools/costs');
});

test('paths that merely start like a legacy prefix are left alone', () => {
  assert.equal(rewriteLegacyPath('/rulestore/rulesetsX'), '/rulestore/rulesetsX');
  assert.equal(rewriteLegacyPath('/RuleStore/rulesets'), '/RuleStore/rulesets');
  assert.equal(rewriteLegacyPath('/behaviorstore/behaviorsets'), '/behaviorstore/behaviorsets');
});
