/**
 * A ZIP import is written in one storage transaction (both stores): a write refused half-way leaves nothing behind,
 * and no reader, on the same storage or on another connection, ever sees a part of an import.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ArchiveNode } from '../src/backup/archive.ts';
import { applyImportPlan } from '../src/backup/import.ts';
import type { ImportPlan, PlannedResource } from '../src/backup/import-plan.ts';
import { newId } from '../src/ids.ts';
import type { ConfigResourceStore, NewResource, Storage } from '../src/storage/ports.ts';
import { storageTargets, useStorage } from './support/storage-targets.ts';

function node(kind: string, originId: string): ArchiveNode {
  return {
    key: `${kind}/${originId}/1`,
    kind,
    originId,
    originVersion: 1,
    file: `${originId}.${kind}.json`,
    name: originId,
    description: '',
    described: true,
    body: {},
    references: [],
    slot: kind,
  };
}

const creating = (kind: string, originId: string, targetId = newId()): PlannedResource => ({
  node: node(kind, originId),
  action: 'CREATE',
  targetId,
  targetVersion: 1,
  bodyJson: `{"origin":"${originId}"}`,
});

function planOf(strategy: ImportPlan['strategy'], resources: PlannedResource[]): ImportPlan {
  return { strategy, resources, agent: resources.at(-1)!, ignoredEntries: [] };
}

/** The storage as the import sees it, with `beforeCreate` run (and awaited) in the transaction before each create. */
function withCreateHook(
  storage: Storage,
  beforeCreate: (resource: NewResource) => Promise<void>,
): Pick<Storage, 'transaction'> {
  return {
    transaction: (work) =>
      storage.transaction((tx) => {
        const create = async (resource: NewResource) => {
          await beforeCreate(resource);
          await tx.resources.create(resource);
        };
        const resources = new Proxy(tx.resources, {
          get: (target, property) =>
            property === 'create' ? create : Reflect.get(target, property, target).bind(target),
        }) as ConfigResourceStore;
        return work({ ...tx, resources });
      }),
  };
}

/**
 * Work of another request on the same storage, started (`go`) from inside an import. It runs in the async context
 * of the test, not of the import's transaction, as a request arriving meanwhile would.
 */
function otherRequest<T>(work: () => Promise<T>): { go: () => void; result: Promise<T> } {
  let go = () => {};
  const started = new Promise<void>((resolve) => {
    go = resolve;
  });
  return { go, result: started.then(work) };
}

async function presentIds(store: ConfigResourceStore, resources: readonly PlannedResource[]): Promise<string[]> {
  const present: string[] = [];
  for (const {
    node: { kind },
    targetId,
  } of resources)
    if (await store.descriptor(kind, targetId)) present.push(targetId);
  return present;
}

for (const [name, setup] of Object.entries(storageTargets)) {
  describe(`import in one transaction: ${name}`, () => {
    const { storage, target } = useStorage(setup);

    test('a write the store refuses half-way leaves nothing behind: no created resource, no new version', async () => {
      const store = storage().resources;
      const existing = newId();
      await store.create({
        kind: 'output',
        id: existing,
        bodyJson: '{"old":true}',
        now: 1,
        name: 'kept',
        description: '',
        origin: {},
      });
      const clash = newId();
      await store.create({
        kind: 'agent',
        id: clash,
        bodyJson: '{"other":true}',
        now: 1,
        name: 'other',
        description: '',
        origin: {},
      });
      const resources: PlannedResource[] = [
        creating('dictionary', 'd'),
        creating('behavior', 'b'),
        { node: node('output', 'o'), action: 'UPDATE', targetId: existing, targetVersion: 2, bodyJson: '{"new":true}' },
        // A real constraint: the agent's id is taken, so its write fails after everything else was written.
        creating('agent', 'a', clash),
      ];
      const created = resources.filter((r) => r.action === 'CREATE' && r.targetId !== clash);
      await assert.rejects(applyImportPlan(planOf('merge', resources), storage(), 2));

      assert.deepEqual(await presentIds(store, created), []);
      assert.equal((await store.descriptor('output', existing))?.currentVersion, 1);
      assert.equal(await store.read('output', existing, 1), '{"old":true}');
      assert.equal(await store.read('output', existing, 2), undefined);
      assert.equal(await store.read('agent', clash, 1), '{"other":true}');
    });

    test('an update that finds its resource moved on is a 409 and undoes the creates before it', async () => {
      const store = storage().resources;
      const existing = newId();
      await store.create({
        kind: 'output',
        id: existing,
        bodyJson: '{"v":1}',
        now: 1,
        name: '',
        description: '',
        origin: {},
      });
      await store.update('output', existing, 1, '{"v":2}', 2);
      const resources: PlannedResource[] = [
        creating('dictionary', 'd'),
        {
          node: node('output', 'o'),
          action: 'UPDATE',
          targetId: existing,
          targetVersion: 2,
          bodyJson: '{"import":true}',
        },
      ];
      await assert.rejects(
        applyImportPlan(planOf('merge', resources), storage(), 3),
        (error: Error & { kind?: string }) => {
          assert.equal(error.kind, 'conflict');
          return true;
        },
      );
      assert.deepEqual(await presentIds(store, resources.slice(0, 1)), []);
      assert.equal((await store.descriptor('output', existing))?.currentVersion, 2);
    });

    test('readers during an import see none of it; afterwards they see all of it', async () => {
      const batch = `batch${newId()}`;
      const resources = [1, 2, 3, 4].map((n) => creating('dictionary', `${batch}-${n}`));
      /** One statement, hence one snapshot: the ids of this batch it lists. */
      const listBatch = async () =>
        (await storage().resources.listDescriptors('dictionary', { filter: batch, index: 0, limit: 10 }))
          .map((d) => d.id)
          .sort();
      const otherConnection = await target().open();
      const sameStorageReads = resources.map(() => otherRequest(listBatch));
      const seenElsewhere: string[][] = [];
      try {
        let writes = 0;
        const storageUnderImport = withCreateHook(storage(), async () => {
          // Before every write: a reader on another connection (awaited), and one on the importing storage itself
          // (not awaited: on SQLite it waits for the transaction to end).
          seenElsewhere.push(await presentIds(otherConnection.resources, resources));
          sameStorageReads[writes++]!.go();
        });
        await applyImportPlan(planOf('create', resources), storageUnderImport, 1);
        assert.deepEqual(seenElsewhere, [[], [], [], []]);
        const all = resources.map((r) => r.targetId);
        for (const { result } of sameStorageReads) {
          const seen = await result;
          assert.ok(seen.length === 0 || seen.length === all.length, `saw ${seen.length} of ${all.length}`);
        }
        assert.deepEqual(await presentIds(otherConnection.resources, resources), all);
        assert.deepEqual(await presentIds(storage().resources, resources), all);
      } finally {
        await otherConnection.close();
      }
    });

    test('a failing import leaves nothing for a reader that ran during it, and other writes meanwhile stay', async () => {
      const resources = [creating('dictionary', 'd'), creating('workflow', 'w'), creating('agent', 'a')];
      const bystander = newId();
      const write = otherRequest(() =>
        storage().resources.create({
          kind: 'output',
          id: bystander,
          bodyJson: '{}',
          now: 1,
          name: '',
          description: '',
          origin: {},
        }),
      );
      const read = otherRequest(() => presentIds(storage().resources, resources));
      const storageUnderImport = withCreateHook(storage(), async (resource) => {
        if (resource.kind !== 'agent') return;
        // Other requests write and read on the same storage while the import is open; then the import fails.
        write.go();
        read.go();
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('storage refused the write');
      });
      await assert.rejects(
        applyImportPlan(planOf('create', resources), storageUnderImport, 1),
        /storage refused the write/,
      );
      await write.result;
      assert.deepEqual(await read.result, []);
      assert.deepEqual(await presentIds(storage().resources, resources), []);
      assert.ok(
        await storage().resources.descriptor('output', bystander),
        'a write from outside the import is not rolled back with it',
      );
    });
  });
}
