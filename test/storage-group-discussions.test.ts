import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GroupDiscussionRecord } from '../src/storage/group-discussion-ports.ts';
import { storageTargets, useStorage } from './support/storage-targets.ts';

/** Group discussions behave the same on both adapters: stored, replaced, claimed once while running, listed, deleted. */
for (const type of ['sqlite', 'postgres'] as const) {
  describe(`group discussions in ${type}`, () => {
    const { storage, reopen } = useStorage(storageTargets[type]);
    const record = (id: string, groupId: string, createdOn: number, state = 'DONE'): GroupDiscussionRecord => ({
      id,
      groupId,
      createdOn,
      lastModifiedOn: createdOn,
      state,
      leaseUntil: undefined,
      bodyJson: JSON.stringify({ id, state }),
    });

    it('stores, replaces, claims once while running, lists newest first, deletes', async () => {
      const store = () => storage().groupDiscussions;
      await store().create(record('d1', 'g1', 1_000));
      await store().create({ ...record('d2', 'g1', 2_000, 'RUNNING'), leaseUntil: 5_000 });
      await store().create(record('d3', 'g2', 3_000));
      await store().update({ ...record('d1', 'g1', 1_000), lastModifiedOn: 1_500, bodyJson: '{"edited":true}' });

      const claims = await Promise.all([1, 2, 3].map(() => store().claim('g1', 'd1', 4_000, 9_000)));
      assert.equal(claims.filter(Boolean).length, 1, 'one follow-up takes a finished discussion');
      assert.equal(await store().claim('g1', 'd2', 4_999, 9_000), false, 'running with its lease');
      assert.equal(await store().claim('g1', 'd2', 5_001, 9_000), true, 'running, but its instance died');
      assert.equal(await store().claim('g2', 'd1', 9_500, 10_000), false, 'a discussion is claimed in its group');
      await reopen();

      assert.deepEqual(await store().get('g1', 'd1'), {
        ...record('d1', 'g1', 1_000),
        state: 'RUNNING',
        leaseUntil: 9_000,
        lastModifiedOn: 1_500,
        bodyJson: '{"edited":true}',
      });
      assert.equal(await store().get('g2', 'd1'), undefined);
      assert.deepEqual(
        (await store().list('g1', 10)).map((r) => r.id),
        ['d2', 'd1'],
      );
      assert.deepEqual(
        (await store().list('g1', 1)).map((r) => r.id),
        ['d2'],
      );
      assert.equal(await store().delete('g1', 'd1'), true);
      assert.equal(await store().delete('g1', 'd1'), false);
      assert.deepEqual(
        (await store().list('g1', 10)).map((r) => r.id),
        ['d2'],
      );
    });
  });
}
