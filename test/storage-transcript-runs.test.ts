import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageTargets, useStorage } from './support/storage-targets.ts';

/** The store of transcript and suite runs behaves the same on both adapters. */
for (const type of ['sqlite', 'postgres'] as const) {
  describe(`transcript runs in ${type}`, () => {
    const { storage, reopen } = useStorage(storageTargets[type]);

    it('keeps runs per transcript or suite, lists them newest first within a limit, reads one back', async () => {
      const run = (id: string, subjectId: string, createdOn: number, passed: boolean) => ({
        id,
        subjectId,
        createdOn,
        passed,
        bodyJson: JSON.stringify({ id, passed }),
      });
      await storage().transcriptRuns.put(run('a1', 'transcript-a', 1_000, true));
      await storage().transcriptRuns.put(run('a2', 'transcript-a', 3_000, false));
      await storage().transcriptRuns.put(run('a3', 'transcript-a', 2_000, true));
      await storage().transcriptRuns.put(run('b1', 'suite-b', 5_000, false));
      await reopen();

      const listed = await storage().transcriptRuns.list('transcript-a', 2);
      assert.deepEqual(
        listed.map((record) => [record.id, record.createdOn, record.passed]),
        [
          ['a2', 3_000, false],
          ['a3', 2_000, true],
        ],
      );
      assert.deepEqual(
        await storage().transcriptRuns.get('transcript-a', 'a1'),
        run('a1', 'transcript-a', 1_000, true),
      );
      assert.equal(
        await storage().transcriptRuns.get('suite-b', 'a1'),
        undefined,
        'a run is read under its own subject',
      );
      assert.deepEqual(await storage().transcriptRuns.list('nobody', 10), []);
    });
  });
}
