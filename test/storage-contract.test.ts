/**
 * The storage contract: one suite, run against every adapter. Each test uses its own kind and ids, so the
 * tests share one database per adapter without seeing each other's rows.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openStorage } from '../src/storage/open.ts';
import type { NewResource, Storage } from '../src/storage/ports.ts';
import { postgresMigrations } from '../src/storage/postgres/migrations.ts';
import { sqliteMigrations } from '../src/storage/sqlite/migrations.ts';
import { createTestDatabase } from './support/postgres.ts';

interface Target {
  /** Opens the same database on every call. */
  open(): Promise<Storage>;
  /** Versions recorded in `schema_migrations`, read without the adapter. */
  migrationVersions(): Promise<number[]>;
  readonly migrationCount: number;
  cleanup(): Promise<void>;
}

let sequence = 0;
/** A unique id (24 hex chars like real ids) and kind per call. */
const uniqueId = () => `${Date.now().toString(16).padStart(12, '0')}${(++sequence).toString(16).padStart(12, '0')}`;
const uniqueKind = () => `kind${++sequence}x${Math.random().toString(36).slice(2, 8)}`;

function resource(kind: string, id: string, overrides: Partial<NewResource> = {}): NewResource {
  return { kind, id, bodyJson: '{"v":1}', now: 1_000, name: '', description: '', origin: {}, ...overrides };
}

function contract(name: string, setup: () => Promise<Target>): void {
  describe(`storage contract: ${name}`, () => {
    let target: Target;
    let storage: Storage;
    const store = () => storage.resources;

    before(async () => {
      target = await setup();
      storage = await target.open();
    });
    after(async () => {
      await storage?.close();
      await target?.cleanup();
    });

    test('create then read returns the body byte-identical, with the descriptor', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      const body =
        '{"z":1,  "a":"h\u00e9llo \u2713 \ud83d\ude00 \u65e5\u672c \\u0000","n":[1,2.50,{"b":null}],"m" : true}';
      await store().create(
        resource(kind, id, {
          bodyJson: body,
          now: 1_700_000_000_123,
          name: 'Smalltalk \u00fc',
          description: 'greetings',
          origin: { originId: 'orig-1', ownerId: 'user-1', spaceId: 'space-1', visibility: 'private' },
        }),
      );
      assert.equal(await store().read(kind, id, 1), body);
      assert.deepEqual(await store().descriptor(kind, id), {
        kind,
        id,
        currentVersion: 1,
        name: 'Smalltalk \u00fc',
        description: 'greetings',
        grants: undefined,
        createdOn: 1_700_000_000_123,
        lastModifiedOn: 1_700_000_000_123,
        deleted: false,
        originId: 'orig-1',
        ownerId: 'user-1',
        spaceId: 'space-1',
        visibility: 'private',
      });
    });

    test('optional descriptor fields default to undefined', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id));
      const descriptor = await store().descriptor(kind, id);
      assert.equal(descriptor?.originId, undefined);
      assert.equal(descriptor?.ownerId, undefined);
      assert.equal(descriptor?.spaceId, undefined);
      assert.equal(descriptor?.visibility, undefined);
      assert.equal(descriptor?.grants, undefined);
    });

    test('updates append versions 1..n, all readable', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id, { bodyJson: '{"v":1}', now: 10 }));
      for (let version = 1; version < 5; version++) {
        const outcome = await store().update(kind, id, version, `{"v":${version + 1}}`, 10 + version);
        assert.deepEqual(outcome, { status: 'updated', version: version + 1 });
      }
      for (let version = 1; version <= 5; version++) {
        assert.equal(await store().read(kind, id, version), `{"v":${version}}`);
      }
      assert.equal(await store().read(kind, id, 6), undefined);
      assert.equal(await store().read(kind, id, 0), undefined);
      const descriptor = await store().descriptor(kind, id);
      assert.equal(descriptor?.currentVersion, 5);
      assert.equal(descriptor?.createdOn, 10);
      assert.equal(descriptor?.lastModifiedOn, 14);
    });

    test('an update of an older version is stale and writes nothing', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id));
      await store().update(kind, id, 1, '{"v":2}', 2_000);
      assert.deepEqual(await store().update(kind, id, 1, '{"v":"late"}', 3_000), {
        status: 'stale',
        currentVersion: 2,
      });
      assert.deepEqual(await store().update(kind, id, 7, '{"v":"future"}', 3_000), {
        status: 'stale',
        currentVersion: 2,
      });
      assert.equal(await store().read(kind, id, 2), '{"v":2}');
      assert.equal(await store().read(kind, id, 3), undefined);
      assert.equal((await store().descriptor(kind, id))?.lastModifiedOn, 2_000);
    });

    test('unknown resources: not-found / undefined / false everywhere', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      assert.deepEqual(await store().update(kind, id, 1, '{}', 1), { status: 'not-found' });
      assert.deepEqual(await store().softDelete(kind, id, 1, 1), { status: 'not-found' });
      assert.equal(await store().read(kind, id, 1), undefined);
      assert.equal(await store().descriptor(kind, id), undefined);
      assert.equal(await store().descriptorById(id), undefined);
      assert.equal(await store().purge(kind, id), false);
      assert.equal(await store().editDescriptor(kind, id, { name: 'x' }, 1), undefined);
      // An existing id under another kind is unknown too.
      await store().create(resource(kind, id));
      const other = uniqueKind();
      assert.deepEqual(await store().update(other, id, 1, '{}', 1), { status: 'not-found' });
      assert.equal(await store().read(other, id, 1), undefined);
      assert.equal(await store().descriptor(other, id), undefined);
    });

    test('concurrent updates of the same version: exactly one wins, the others are stale', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id));
      const outcomes = await Promise.all(
        [1, 2, 3, 4, 5].map((n) => store().update(kind, id, 1, `{"writer":${n}}`, 5_000 + n)),
      );
      const winners = outcomes.flatMap((outcome, index) => (outcome.status === 'updated' ? [index + 1] : []));
      assert.equal(winners.length, 1);
      for (const outcome of outcomes) {
        assert.ok(
          outcome.status === 'updated'
            ? outcome.version === 2
            : outcome.status === 'stale' && outcome.currentVersion === 2,
          JSON.stringify(outcome),
        );
      }
      assert.equal(await store().read(kind, id, 2), `{"writer":${winners[0]}}`);
      assert.equal(await store().read(kind, id, 3), undefined);
      assert.equal((await store().descriptor(kind, id))?.currentVersion, 2);
    });

    test('soft delete hides the current version and the listing entry, keeps older versions', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id, { bodyJson: '{"v":1}', name: 'doomed' }));
      await store().update(kind, id, 1, '{"v":2}', 2_000);
      assert.deepEqual(await store().softDelete(kind, id, 1, 3_000), { status: 'stale', currentVersion: 2 });
      assert.equal((await store().listDescriptors(kind, { filter: '', index: 0, limit: 10 })).length, 1);

      assert.deepEqual(await store().softDelete(kind, id, 2, 3_000), { status: 'deleted' });
      assert.equal(await store().read(kind, id, 2), undefined);
      assert.equal(await store().read(kind, id, 1), '{"v":1}');
      const descriptor = await store().descriptor(kind, id);
      assert.equal(descriptor?.deleted, true);
      assert.equal(descriptor?.currentVersion, 2);
      assert.equal((await store().descriptorById(id))?.deleted, true);
      assert.deepEqual(await store().listDescriptors(kind, { filter: '', index: 0, limit: 10 }), []);
      assert.deepEqual(await store().listDescriptors(kind, { filter: 'doomed', index: 0, limit: 10 }), []);

      assert.deepEqual(await store().update(kind, id, 2, '{"v":3}', 4_000), { status: 'not-found' });
      assert.deepEqual(await store().softDelete(kind, id, 2, 4_000), { status: 'not-found' });
      assert.equal(await store().editDescriptor(kind, id, { name: 'revived' }, 4_000), undefined);
      assert.equal(await store().read(kind, id, 3), undefined);
    });

    test('purge removes every version and the descriptor, live or soft-deleted', async () => {
      const kind = uniqueKind();
      const [live, deleted, bystander] = [uniqueId(), uniqueId(), uniqueId()];
      for (const id of [live, deleted, bystander]) {
        await store().create(resource(kind, id));
        await store().update(kind, id, 1, '{"v":2}', 2_000);
      }
      await store().softDelete(kind, deleted, 2, 3_000);
      for (const id of [live, deleted]) {
        assert.equal(await store().purge(kind, id), true);
        assert.equal(await store().read(kind, id, 1), undefined);
        assert.equal(await store().read(kind, id, 2), undefined);
        assert.equal(await store().descriptor(kind, id), undefined);
        assert.equal(await store().descriptorById(id), undefined);
        assert.equal(await store().purge(kind, id), false);
      }
      assert.equal(await store().read(kind, bystander, 2), '{"v":2}');
      assert.deepEqual(
        (await store().listDescriptors(kind, { filter: '', index: 0, limit: 10 })).map((d) => d.id),
        [bystander],
      );
      // The purged id can be created afresh.
      await store().create(resource(kind, live, { bodyJson: '{"again":true}' }));
      assert.equal(await store().read(kind, live, 1), '{"again":true}');
      assert.equal(await store().read(kind, live, 2), undefined);
    });

    test('listing: newest modification first, id descending on ties, paged by index * limit', async () => {
      const kind = uniqueKind();
      const ids = ['a', 'b', 'c', 'd', 'e'].map((suffix) => `${uniqueId().slice(0, 23)}${suffix}`);
      // a=100, b=300, c=200, d=300 (tie with b), e=50
      const times = [100, 300, 200, 300, 50];
      for (const [index, id] of ids.entries()) await store().create(resource(kind, id, { now: times[index]! }));
      await store().create(resource(uniqueKind(), uniqueId(), { now: 10_000 })); // another kind: never listed
      const [a, b, c, d, e] = ids as [string, string, string, string, string];
      const page = async (index: number, limit: number) =>
        (await store().listDescriptors(kind, { filter: '', index, limit })).map((descriptor) => descriptor.id);

      assert.deepEqual(await page(0, 10), [d, b, c, a, e]);
      assert.deepEqual(await page(0, 2), [d, b]);
      assert.deepEqual(await page(1, 2), [c, a]);
      assert.deepEqual(await page(2, 2), [e]);
      assert.deepEqual(await page(3, 2), []);
      assert.deepEqual(await page(1, 1), [b]);

      await store().update(kind, e, 1, '{"v":2}', 400);
      assert.deepEqual(await page(0, 10), [e, d, b, c, a]);
      const [first] = await store().listDescriptors(kind, { filter: '', index: 0, limit: 1 });
      assert.equal(first?.currentVersion, 2);
      assert.equal(first?.lastModifiedOn, 400);
    });

    test('listing filter: case-insensitive text in name, description or id, never a pattern', async () => {
      const kind = uniqueKind();
      const [alpha, beta, gamma] = [uniqueId(), uniqueId(), uniqueId()];
      await store().create(resource(kind, alpha, { name: 'Alpha Rules', description: 'first', now: 3 }));
      await store().create(resource(kind, beta, { name: 'beta', description: 'About BOTS and \u00dcmlauts', now: 2 }));
      await store().create(resource(kind, gamma, { name: 'gamma', description: '', now: 1 }));
      const ids = async (filter: string) =>
        (await store().listDescriptors(kind, { filter, index: 0, limit: 10 })).map((descriptor) => descriptor.id);

      assert.deepEqual(await ids(''), [alpha, beta, gamma]);
      assert.deepEqual(await ids('alpha'), [alpha]);
      assert.deepEqual(await ids('ALPHA rules'), [alpha]);
      assert.deepEqual(await ids('a'), [alpha, beta, gamma]);
      assert.deepEqual(await ids('bots and'), [beta]);
      // Pattern characters are plain text.
      assert.deepEqual(await ids('^a'), []);
      assert.deepEqual(await ids('b.ts'), []);
      assert.deepEqual(await ids('^(beta|gamma)$'), []);
      assert.deepEqual(await ids('%'), []);
      assert.deepEqual(await ids('_'), []);
      assert.deepEqual(await ids('FIRST'), [alpha]);
      assert.deepEqual(await ids('\u00fcmlauts'), [beta]); // non-ASCII case folding
      assert.deepEqual(await ids(gamma.slice(-8)), [gamma]);
      assert.deepEqual(await ids(gamma.toUpperCase()), [gamma]);
      assert.deepEqual(await ids('nothing-matches-this'), []);
      // Paging applies after filtering.
      assert.deepEqual(
        await store()
          .listDescriptors(kind, { filter: 'a', index: 1, limit: 1 })
          .then((l) => l.map((x) => x.id)),
        [beta],
      );
    });

    test('listing narrowed by spaceId', async () => {
      const kind = uniqueKind();
      const [one, two, none] = [uniqueId(), uniqueId(), uniqueId()];
      await store().create(resource(kind, one, { name: 'one', now: 3, origin: { spaceId: 'space-a' } }));
      await store().create(resource(kind, two, { name: 'two', now: 2, origin: { spaceId: 'space-b' } }));
      await store().create(resource(kind, none, { name: 'three', now: 1 }));
      const ids = async (spaceId: string | undefined, filter = '') =>
        (await store().listDescriptors(kind, { filter, index: 0, limit: 10, spaceId })).map(
          (descriptor) => descriptor.id,
        );
      assert.deepEqual(await ids(undefined), [one, two, none]);
      assert.deepEqual(await ids('space-a'), [one]);
      assert.deepEqual(await ids('space-b'), [two]);
      assert.deepEqual(await ids('space-c'), []);
      assert.deepEqual(await ids('space-a', 'two'), []);
      assert.deepEqual(await ids('space-b', 'TWO'), [two]);
    });

    test('editDescriptor sets name and/or description of a live resource', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id, { name: 'old', description: 'old text', now: 100 }));
      const named = await store().editDescriptor(kind, id, { name: 'New name' }, 200);
      assert.equal(named?.name, 'New name');
      assert.equal(named?.description, 'old text');
      assert.equal(named?.lastModifiedOn, 200);
      assert.equal(named?.createdOn, 100);
      assert.equal(named?.currentVersion, 1);
      const described = await store().editDescriptor(kind, id, { description: 'new text' }, 300);
      assert.equal(described?.name, 'New name');
      assert.equal(described?.description, 'new text');
      const both = await store().editDescriptor(kind, id, { name: '', description: '\u00e9t\u00e9' }, 400);
      assert.equal(both?.name, '');
      assert.equal(both?.description, '\u00e9t\u00e9');
      assert.deepEqual(await store().descriptor(kind, id), both);
      assert.equal(await store().read(kind, id, 1), '{"v":1}');
      assert.deepEqual(
        (await store().listDescriptors(kind, { filter: '\u00c9T\u00c9', index: 0, limit: 10 })).map((d) => d.id),
        [id],
      );
    });

    test('descriptorById finds a resource whatever its kind', async () => {
      const kind = uniqueKind();
      const id = uniqueId();
      await store().create(resource(kind, id, { name: 'by id' }));
      const descriptor = await store().descriptorById(id);
      assert.equal(descriptor?.kind, kind);
      assert.equal(descriptor?.name, 'by id');
      assert.deepEqual(descriptor, await store().descriptor(kind, id));
    });

    test('ping answers; a closed store fails', async () => {
      await storage.ping();
      const other = await target.open();
      await other.ping();
      await other.close();
      await other.close(); // idempotent
      await assert.rejects(other.ping());
    });

    test('opening twice runs no migration again', async () => {
      const expected = Array.from({ length: target.migrationCount }, (_, index) => index + 1);
      assert.deepEqual(await target.migrationVersions(), expected);
      const second = await target.open();
      try {
        assert.deepEqual(await target.migrationVersions(), expected);
        await second.ping();
      } finally {
        await second.close();
      }
    });

    test('reopening the same database keeps everything', async () => {
      const kind = uniqueKind();
      const [kept, deleted] = [uniqueId(), uniqueId()];
      await store().create(
        resource(kind, kept, { bodyJson: '{"\u00e4":"kept"}', name: 'kept', origin: { spaceId: 's' } }),
      );
      await store().update(kind, kept, 1, '{"\u00e4":"kept2"}', 2_000);
      await store().create(resource(kind, deleted));
      await store().softDelete(kind, deleted, 1, 2_000);
      const before = await store().descriptor(kind, kept);

      await storage.close();
      storage = await target.open();

      assert.equal(await store().read(kind, kept, 1), '{"\u00e4":"kept"}');
      assert.equal(await store().read(kind, kept, 2), '{"\u00e4":"kept2"}');
      assert.deepEqual(await store().descriptor(kind, kept), before);
      assert.equal(await store().read(kind, deleted, 1), undefined);
      assert.equal((await store().descriptor(kind, deleted))?.deleted, true);
      assert.deepEqual(
        (await store().listDescriptors(kind, { filter: 'KEPT', index: 0, limit: 10, spaceId: 's' })).map((d) => d.id),
        [kept],
      );
    });

    test('transaction: its writes commit together when the work resolves', async () => {
      const kind = uniqueKind();
      const [created, updated] = [uniqueId(), uniqueId()];
      await store().create(resource(kind, updated));
      const result = await storage.transaction(async (tx) => {
        await tx.resources.create(resource(kind, created));
        assert.deepEqual(await tx.resources.update(kind, updated, 1, '{"v":2}', 2_000), {
          status: 'updated',
          version: 2,
        });
        assert.equal(await tx.resources.read(kind, created, 1), '{"v":1}', 'the work reads its own writes');
        return 'done';
      });
      assert.equal(result, 'done');
      assert.equal(await store().read(kind, created, 1), '{"v":1}');
      assert.equal(await store().read(kind, updated, 2), '{"v":2}');
    });

    test('transaction: a rejected work undoes every write, also of stores that run their own transactions, and passes the rejection on', async () => {
      const kind = uniqueKind();
      const [created, updated, purged, conversationId] = [uniqueId(), uniqueId(), uniqueId(), uniqueId()];
      await store().create(resource(kind, updated));
      await store().create(resource(kind, purged));
      const conversation = {
        id: conversationId,
        agentId: 'a',
        agentVersion: 1,
        userId: `user-${conversationId}`,
        environment: 'production',
        state: 'READY' as const,
        createdOn: 1,
        lastModifiedOn: 1,
        stepCount: 1,
        revision: 1,
        stateJson: '{}',
      };
      await assert.rejects(
        storage.transaction(async (tx) => {
          await tx.resources.create(resource(kind, created));
          await tx.resources.update(kind, updated, 1, '{"v":2}', 2_000);
          assert.equal(await tx.resources.purge(kind, purged), true);
          await tx.conversations.create(conversation, ['{"step":0}']);
          await tx.userProperties.upsert(
            conversation.userId,
            new Map([
              ['a', '1'],
              ['b', '2'],
            ]),
            1,
          );
          throw new Error('work failed');
        }),
        /work failed/,
      );
      assert.equal(await store().descriptor(kind, created), undefined);
      assert.equal((await store().descriptor(kind, updated))?.currentVersion, 1);
      assert.equal(await store().read(kind, purged, 1), '{"v":1}');
      assert.equal(await storage.conversations.load(conversationId), undefined);
      assert.equal((await storage.userProperties.load(conversation.userId)).size, 0);
    });

    test('transaction: a write the store refuses (a taken id) rejects it and undoes the writes before it', async () => {
      const kind = uniqueKind();
      const [taken, created] = [uniqueId(), uniqueId()];
      await store().create(resource(kind, taken));
      await assert.rejects(
        storage.transaction(async (tx) => {
          await tx.resources.create(resource(kind, created));
          await tx.resources.create(resource(kind, taken, { bodyJson: '{"v":"again"}' }));
        }),
      );
      assert.equal(await store().read(kind, taken, 1), '{"v":1}');
      assert.equal(await store().descriptor(kind, created), undefined);
    });

    test('transaction: writes from outside it, meanwhile, are not part of it', async () => {
      const kind = uniqueKind();
      const [inside, outside] = [uniqueId(), uniqueId()];
      let outsideWrite: Promise<void> | undefined;
      const release = new Promise<void>((resolve) => setImmediate(resolve));
      const other = release.then(() => store().create(resource(kind, outside)));
      await assert.rejects(
        storage.transaction(async (tx) => {
          await tx.resources.create(resource(kind, inside));
          await release;
          outsideWrite = other;
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error('rolled back');
        }),
      );
      await outsideWrite;
      assert.equal(await store().descriptor(kind, inside), undefined);
      assert.equal(await store().read(kind, outside, 1), '{"v":1}');
    });
  });
}

contract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-storage-'));
  const path = join(dir, 'nested', 'folder', 'store.db'); // the adapter creates missing folders
  return {
    open: () => openStorage({ type: 'sqlite', path }),
    migrationVersions: async () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return db
          .prepare('SELECT version FROM schema_migrations ORDER BY version')
          .all()
          .map((row) => Number(row.version));
      } finally {
        db.close();
      }
    },
    migrationCount: sqliteMigrations.length,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

contract('postgres', async () => {
  const database = await createTestDatabase();
  return {
    open: () => openStorage({ type: 'postgres', url: database.url }),
    migrationVersions: () => postgresMigrationVersions(database.url),
    migrationCount: postgresMigrations.length,
    cleanup: () => database.drop(),
  };
});

async function postgresMigrationVersions(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
    return rows.map((row) => Number(row.version));
  } finally {
    await client.end();
  }
}

describe('sqlite adapter specifics', () => {
  test(':memory: works', async () => {
    const storage = await openStorage({ type: 'sqlite', path: ':memory:' });
    try {
      await storage.resources.create(resource('k', 'id1', { bodyJson: '{"x":1}' }));
      assert.equal(await storage.resources.read('k', 'id1', 1), '{"x":1}');
      assert.equal(storage.type, 'sqlite');
    } finally {
      await storage.close();
    }
  });

  test('transactions on the one connection run one after the other; the storage itself is refused inside one', async () => {
    const storage = await openStorage({ type: 'sqlite', path: ':memory:' });
    try {
      const order: string[] = [];
      const slow = storage.transaction(async (tx) => {
        order.push('slow begins');
        await new Promise((resolve) => setTimeout(resolve, 20));
        await tx.resources.create(resource('k', 'slow'));
        order.push('slow ends');
      });
      const fast = storage.transaction(async (tx) => {
        order.push('fast begins');
        await tx.resources.create(resource('k', 'fast'));
        order.push('fast ends');
      });
      await Promise.all([slow, fast]);
      assert.deepEqual(order, ['slow begins', 'slow ends', 'fast begins', 'fast ends']);
      // Waiting for itself would hang every later use of the connection: it fails at once instead.
      await assert.rejects(
        storage.transaction(() => storage.resources.read('k', 'slow', 1)),
        /use only the stores it gives/,
      );
      assert.equal(await storage.resources.read('k', 'fast', 1), '{"v":1}');
    } finally {
      await storage.close();
    }
  });

  test('the file is in WAL mode', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-storage-'));
    try {
      const path = join(dir, 'wal.db');
      const storage = await openStorage({ type: 'sqlite', path });
      const db = new DatabaseSync(path);
      try {
        assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
      } finally {
        db.close();
        await storage.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unusable path rejects with a message naming the store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-storage-'));
    try {
      await writeFile(join(dir, 'plain-file'), 'not a folder');
      await assert.rejects(
        openStorage({ type: 'sqlite', path: join(dir, 'plain-file', 'store.db') }),
        /SQLite store at .*store\.db/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('postgres adapter specifics', () => {
  test('instances starting at once on a fresh database migrate it exactly once', async () => {
    const database = await createTestDatabase();
    try {
      const storages = await Promise.all([1, 2, 3, 4].map(() => openStorage({ type: 'postgres', url: database.url })));
      try {
        assert.deepEqual(
          await postgresMigrationVersions(database.url),
          Array.from({ length: postgresMigrations.length }, (_, index) => index + 1),
        );
        await storages[0]!.resources.create(resource('k', 'shared-id', { bodyJson: '{"from":0}' }));
        for (const storage of storages) assert.equal(await storage.resources.read('k', 'shared-id', 1), '{"from":0}');
        // Instances (separate pools) racing on one version: exactly one wins.
        const outcomes = await Promise.all(
          storages.map((storage, n) => storage.resources.update('k', 'shared-id', 1, `{"from":${n}}`, 2)),
        );
        assert.equal(outcomes.filter((outcome) => outcome.status === 'updated').length, 1);
        assert.equal(outcomes.filter((outcome) => outcome.status === 'stale').length, storages.length - 1);
      } finally {
        await Promise.all(storages.map((storage) => storage.close()));
      }
    } finally {
      await database.drop();
    }
  });

  test('a connection failure names the store and the cause, never the password', async () => {
    const secret = 'S3cr%40tPassw0rd';
    const error = await openStorage({ type: 'postgres', url: `postgres://svc:${secret}@127.0.0.1:1/svc` }).then(
      () => assert.fail('should not open'),
      (reason: unknown) => reason as Error,
    );
    assert.ok(error instanceof Error);
    assert.match(error.message, /PostgreSQL store at postgres:\/\/svc:\*\*\*@127\.0\.0\.1:1\/svc/);
    assert.match(error.message, /ECONNREFUSED/);
    assert.doesNotMatch(error.message, /S3cr/);
    assert.equal(error.cause, undefined);
  });

  test('an unknown database is reported with its cause', async () => {
    const url = new URL((await import('./support/postgres.ts')).adminUrl);
    url.pathname = '/svc_test_does_not_exist';
    url.password = 'hunter2';
    await assert.rejects(openStorage({ type: 'postgres', url: url.toString() }), (error: Error) => {
      assert.match(error.message, /PostgreSQL store at .*svc_test_does_not_exist.*does not exist/);
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    });
  });
});
