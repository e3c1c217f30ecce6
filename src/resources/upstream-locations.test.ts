import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrateLocationSubstrings } from './upstream-locations.ts';

test("the Bot Fathers' positional cuts of the original's locations become extractId / extractVersion", () => {
  // The positions of every location the original's Bot Father 1.0 and 3.0 read.
  const cases: Array<[target: string, id: [number, number], version: number]> = [
    ['properties.botLocation', [33, 57], 66], // eddi://ai.labs.bot/botstore/bots/
    ['properties.packageLocation', [45, 69], 78], // eddi://ai.labs.package/packagestore/packages/
    ['properties.outputSetLocation', [45, 69], 78], // eddi://ai.labs.output/outputstore/outputsets/
    ['properties.httpCallsLocation', [50, 74], 83], // eddi://ai.labs.httpcalls/httpcallsstore/httpcalls/
    ['properties.behaviorSetLocation', [51, 75], 84], // eddi://ai.labs.behavior/behaviorstore/behaviorsets/
    ['properties.langChainLocation', [51, 75], 84], // eddi://ai.labs.langchain/langchainstore/langchains/
    ['properties.propertiesLocation', [60, 84], 93], // eddi://ai.labs.property/propertysetterstore/propertysetters/
  ];
  for (const [target, [from, to], version] of cases) {
    assert.equal(
      migrateLocationSubstrings(`[[\${#strings.substring(${target}, ${from}, ${to})}]]`),
      `[[\${#uuidUtils.extractId(${target})}]]`,
    );
    assert.equal(
      migrateLocationSubstrings(`{#strings.substring(${target},${version})}`),
      `{#uuidUtils.extractVersion(${target})}`,
    );
  }
  assert.equal(
    migrateLocationSubstrings('/descriptorstore/descriptors/[[${#strings.substring(properties.botLocation, 33, 57)}]]'),
    '/descriptorstore/descriptors/[[${#uuidUtils.extractId(properties.botLocation)}]]',
  );
});

test('other substrings are left as they are', () => {
  for (const text of [
    '[[${#strings.substring(properties.name, 0, 3)}]]', // not a location's id span
    '[[${#strings.substring(properties.botLocation, 33, 50)}]]', // not 24 characters
    '[[${#strings.substring(properties.botLocation, 34, 58)}]]', // not where an id starts
    '[[${#strings.substring(properties.log, 1)}]]',
    '[[${#strings.substring(properties.log, 1, #strings.length(properties.log))}]]',
    'no template at all',
  ]) {
    assert.equal(migrateLocationSubstrings(text), text);
  }
});
