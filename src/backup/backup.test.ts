import assert from 'node:assert/strict';
import { test } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import type { ConfigResourceStore, NewResource } from '../storage/ports.ts';
import type { ArchiveNode } from './archive.ts';
import { applyImportPlan } from './import.ts';
import type { ImportPlan, PlannedResource } from './import-plan.ts';
import { migrateText } from './legacy-migration.ts';
import { scrubSecrets } from './secret-scrubbing.ts';
import { readZip, unsafeEntryName, ZipTooLargeError } from './zip-reader.ts';

test('Thymeleaf inline expressions, blocks and legacy vault references are migrated', () => {
  const cases: [string, string][] = [
    ['[[${memory.current.input}]]', '{memory.current.input}'],
    ['Hi [[${ properties.name }]] and [(${context.x})]!', 'Hi {properties.name} and {context.x}!'],
    ['[# th:each="city : ${properties.cities}"][[${city}]], [/]', '{#for city in properties.cities}{city}, {/for}'],
    ['[# th:each="c, stat : ${list}"][# th:if="${c.ok}"]ok[/][/]', '{#for c in list}{#if c.ok}ok{/if}{/for}'],
    ['[# th:unless="${done}"]todo[/]', '{#if !(done)}todo{/if}'],
    ['${eddivault:openai} and ${svcvault:tenant/key}', '${vault:openai} and ${vault:tenant/key}'],
    ['${vault:kept} {already.brace} plain [/] [[ x ]]', '${vault:kept} {already.brace} plain [/] [[ x ]]'],
  ];
  for (const [legacy, migrated] of cases) assert.equal(migrateText(legacy), migrated, legacy);
});

test('entry names: relative paths only', () => {
  assert.equal(unsafeEntryName('a/b/c.json'), undefined);
  assert.equal(unsafeEntryName('a/..b/c.json'), undefined);
  for (const name of ['../x', 'a/../x', '/x', 'a\\x', 'C:x', 'c:/x', '']) assert.ok(unsafeEntryName(name), name);
});

test('readZip returns the files, skips folders, and refuses archives beyond the limits', () => {
  const zip = zipSync({ 'a.json': strToU8('{"a":1}'), 'folder/': new Uint8Array(0), 'folder/b.txt': strToU8('x'.repeat(1000)) });
  const files = readZip(zip, { maxUnpackedBytes: 10_000, maxEntries: 10 });
  assert.deepEqual([...files.keys()], ['a.json', 'folder/b.txt']);
  assert.equal(new TextDecoder().decode(files.get('a.json')), '{"a":1}');
  assert.throws(() => readZip(zip, { maxUnpackedBytes: 500, maxEntries: 10 }), ZipTooLargeError);
  assert.throws(() => readZip(zip, { maxUnpackedBytes: 10_000, maxEntries: 2 }), /at most 2/);
});

test('secret scrubbing keeps vault references and templates, blanks literal credentials', () => {
  const { body, scrubbed } = scrubSecrets('agent', {
    channels: [{ type: 'svc://ai.svc.channel.messenger', config: { appSecret: 'literal', verificationToken: '${vault:verify}', pageName: 'shop' } }],
  });
  assert.deepEqual(body, { channels: [{ type: 'svc://ai.svc.channel.messenger', config: { appSecret: '', verificationToken: '${vault:verify}', pageName: 'shop' } }] });
  assert.deepEqual(scrubbed, [{ path: '$.channels[0].config.appSecret' }]);
});

// --- all or nothing --------------------------------------------------------------------------------------------

function node(kind: string, originId: string): ArchiveNode {
  return { key: `${kind}/${originId}/1`, kind, originId, originVersion: 1, file: `${originId}.${kind}.json`, name: '', description: '', body: {}, references: [], slot: kind };
}

function fakeStore(failOnCreate: number) {
  const log: string[] = [];
  let creates = 0;
  const store = {
    async create(resource: NewResource) {
      if (++creates === failOnCreate) throw new Error('disk full');
      log.push(`create ${resource.id}`);
    },
    async update(kind: string, id: string, expected: number, bodyJson: string) {
      log.push(`update ${id} ${expected} ${bodyJson}`);
      return { status: 'updated' as const, version: expected + 1 };
    },
    async purge(kind: string, id: string) {
      log.push(`purge ${id}`);
      return true;
    },
  } as unknown as ConfigResourceStore;
  return { store, log };
}

test('a write failing midway purges what was created and leaves nothing behind', async () => {
  const resources: PlannedResource[] = [
    { node: node('dictionary', 'd'), action: 'CREATE', targetId: 'new-d', targetVersion: 1, bodyJson: '{}' },
    { node: node('output', 'o'), action: 'CREATE', targetId: 'new-o', targetVersion: 1, bodyJson: '{}' },
    { node: node('workflow', 'w'), action: 'CREATE', targetId: 'new-w', targetVersion: 1, bodyJson: '{}' },
  ];
  const plan: ImportPlan = { strategy: 'create', resources, agent: resources[2]!, ignoredEntries: [] };
  const { store, log } = fakeStore(3);
  await assert.rejects(applyImportPlan(plan, store, 1), /disk full/);
  assert.deepEqual(log, ['create new-d', 'create new-o', 'purge new-o', 'purge new-d']);
});

test('a failing update undoes earlier updates with a version holding the previous content', async () => {
  const resources: PlannedResource[] = [
    { node: node('dictionary', 'd'), action: 'CREATE', targetId: 'new-d', targetVersion: 1, bodyJson: '{}' },
    { node: node('output', 'o'), action: 'UPDATE', targetId: 'old-o', targetVersion: 3, bodyJson: '{"new":1}', previousBodyJson: '{"old":1}' },
    { node: node('agent', 'a'), action: 'UPDATE', targetId: 'old-a', targetVersion: 2, bodyJson: '{"new":2}', previousBodyJson: '{"old":2}' },
  ];
  const plan: ImportPlan = { strategy: 'merge', resources, agent: resources[2]!, ignoredEntries: [] };
  const { store, log } = fakeStore(0);
  const failing = Object.create(store) as ConfigResourceStore;
  failing.update = async (kind, id, expected, bodyJson, now) =>
    id === 'old-a' && bodyJson === '{"new":2}' ? { status: 'stale', currentVersion: 5 } : store.update(kind, id, expected, bodyJson, now);
  await assert.rejects(applyImportPlan(plan, failing, 1), /changed while the import ran/);
  assert.deepEqual(log, ['create new-d', 'update old-o 2 {"new":1}', 'update old-o 3 {"old":1}', 'purge new-d']);
});
