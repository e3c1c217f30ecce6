/**
 * The secret storage contract (vault meta, wrapped tenant data keys, sealed secrets): one suite, run against
 * every adapter. Each test uses its own tenant, so the tests share one database per adapter.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SealedBox } from '../src/storage/secret-ports.ts';
import { storageTargets, useStorage, type StorageTarget } from './support/storage-targets.ts';

let sequence = 0;
const uniqueTenant = () => `tenant-${++sequence}-${Math.random().toString(36).slice(2, 8)}`;
const box = (label: string): SealedBox => ({ ciphertext: `c-${label}`, iv: `i-${label}`, tag: `t-${label}` });

function contract(name: string, setup: () => Promise<StorageTarget>): void {
  describe(`secret storage contract: ${name}`, () => {
    const { storage, reopen } = useStorage(setup);
    const secrets = () => storage().secrets;

    test('putMetaIfAbsent keeps the first value', async () => {
      const key = `meta-${uniqueTenant()}`;
      assert.equal(await secrets().putMetaIfAbsent(key, 'first'), 'first');
      assert.equal(await secrets().putMetaIfAbsent(key, 'second'), 'first');
    });

    test('a tenant data key is written once: the first writer wins, also when racing', async () => {
      const tenant = uniqueTenant();
      assert.equal(await secrets().dataKey(tenant), undefined);
      const results = await Promise.all([
        secrets().putDataKeyIfAbsent(tenant, box('a'), 1),
        secrets().putDataKeyIfAbsent(tenant, box('b'), 2),
      ]);
      assert.deepEqual(results[0], results[1]);
      assert.deepEqual(await secrets().dataKey(tenant), results[0]);
      assert.deepEqual(await secrets().putDataKeyIfAbsent(tenant, box('c'), 3), results[0]);
    });

    test('put creates, then replaces keeping createdAt; an omitted description is kept', async () => {
      const tenant = uniqueTenant();
      const created = await secrets().put({
        tenant,
        name: 'api.key_1-x',
        sealed: box('1'),
        description: 'first',
        now: 1_000,
      });
      assert.deepEqual(created, {
        created: true,
        metadata: { tenant, name: 'api.key_1-x', description: 'first', createdAt: 1_000, lastModifiedAt: 1_000 },
      });
      const replaced = await secrets().put({
        tenant,
        name: 'api.key_1-x',
        sealed: box('2'),
        description: undefined,
        now: 2_000,
      });
      assert.deepEqual(replaced, {
        created: false,
        metadata: { tenant, name: 'api.key_1-x', description: 'first', createdAt: 1_000, lastModifiedAt: 2_000 },
      });
      const described = await secrets().put({
        tenant,
        name: 'api.key_1-x',
        sealed: box('3'),
        description: '',
        now: 3_000,
      });
      assert.equal(described.metadata.description, '');
      assert.deepEqual(await secrets().get(tenant, 'api.key_1-x'), {
        tenant,
        name: 'api.key_1-x',
        description: '',
        createdAt: 1_000,
        lastModifiedAt: 3_000,
        sealed: box('3'),
      });
      const fresh = await secrets().put({
        tenant,
        name: 'no-description',
        sealed: box('4'),
        description: undefined,
        now: 4_000,
      });
      assert.equal(fresh.metadata.description, '');
    });

    test('list is per tenant, by name; get and delete miss unknown names', async () => {
      const tenant = uniqueTenant();
      const other = uniqueTenant();
      for (const name of ['b', 'a', 'C', '_z'])
        await secrets().put({ tenant, name, sealed: box(name), description: `d-${name}`, now: 5 });
      await secrets().put({ tenant: other, name: 'a', sealed: box('other'), description: '', now: 6 });
      assert.deepEqual(
        (await secrets().list(tenant)).map((secret) => secret.name),
        ['C', '_z', 'a', 'b'],
      );
      assert.deepEqual(await secrets().list(uniqueTenant()), []);
      assert.deepEqual((await secrets().list(tenant))[0], {
        tenant,
        name: 'C',
        description: 'd-C',
        createdAt: 5,
        lastModifiedAt: 5,
      });
      assert.equal(await secrets().get(tenant, 'missing'), undefined);
      assert.equal(await secrets().delete(tenant, 'a'), true);
      assert.equal(await secrets().delete(tenant, 'a'), false);
      assert.equal(await secrets().get(tenant, 'a'), undefined);
      assert.deepEqual((await secrets().get(other, 'a'))?.sealed, box('other'), 'the other tenant keeps its secret');
    });

    test('everything survives reopening the store', async () => {
      const tenant = uniqueTenant();
      await secrets().putDataKeyIfAbsent(tenant, box('key'), 1);
      await secrets().put({ tenant, name: 'kept', sealed: box('kept'), description: 'd', now: 7 });
      await reopen();
      assert.deepEqual(await secrets().dataKey(tenant), box('key'));
      assert.deepEqual(await secrets().get(tenant, 'kept'), {
        tenant,
        name: 'kept',
        description: 'd',
        createdAt: 7,
        lastModifiedAt: 7,
        sealed: box('kept'),
      });
    });
  });
}

contract('sqlite', storageTargets.sqlite);
contract('postgres', storageTargets.postgres);
