import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScheduleRunRecord } from '../src/storage/schedule-run-ports.ts';
import { storageTargets, useStorage } from './support/storage-targets.ts';

/** The run history of schedules behaves the same on both adapters; a due time is claimed once. */
for (const type of ['sqlite', 'postgres'] as const) {
  describe(`schedule runs in ${type}`, () => {
    const { storage, reopen } = useStorage(storageTargets[type]);
    const run = (id: string, scheduleId: string, dueOn: number): ScheduleRunRecord => ({
      id,
      scheduleId,
      dueOn,
      startedOn: dueOn + 5,
      outcome: 'RUNNING',
    });

    it('claims a due time once, finishes runs, lists them latest due first and finds the last conversation', async () => {
      const runs = () => storage().scheduleRuns;
      assert.equal(await runs().claim(run('r1', 's1', 1_000)), true);
      assert.equal(await runs().claim(run('r1-again', 's1', 1_000)), false, 'the same due time is taken');
      assert.equal(await runs().claim(run('r2', 's1', 2_000)), true);
      assert.equal(await runs().claim(run('r3', 's1', 3_000)), true);
      assert.equal(await runs().claim(run('other', 's2', 1_000)), true, 'another schedule has its own due times');
      const claims = await Promise.all([0, 1, 2, 3].map((n) => runs().claim(run(`race${n}`, 's3', 7_000))));
      assert.equal(claims.filter(Boolean).length, 1, 'of concurrent claims exactly one wins');

      await runs().finish('s1', 'r1', { finishedOn: 1_100, outcome: 'OK', conversationId: 'c1' });
      await runs().finish('s1', 'r2', { finishedOn: 2_100, outcome: 'OK', conversationId: 'c2' });
      await runs().finish('s1', 'r3', { finishedOn: 3_100, outcome: 'FAILED', detail: 'not deployed' });
      await reopen();

      assert.deepEqual(await runs().list('s1', 2), [
        {
          ...run('r3', 's1', 3_000),
          finishedOn: 3_100,
          outcome: 'FAILED',
          conversationId: undefined,
          detail: 'not deployed',
        },
        { ...run('r2', 's1', 2_000), finishedOn: 2_100, outcome: 'OK', conversationId: 'c2', detail: undefined },
      ]);
      assert.equal(await runs().lastConversation('s1'), 'c2');
      assert.equal(await runs().lastConversation('s2'), undefined);
      assert.deepEqual(await runs().list('nobody', 10), []);
    });
  });
}
