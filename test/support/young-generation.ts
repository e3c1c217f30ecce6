import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { disablePretenuring } from '../../src/ops/pretenuring.ts';

/**
 * How many bytes the old generation grew by, per item, over `run` making `items` things nobody keeps: measured
 * after a full collection before and two young collections after, so what `run` made and dropped is counted only
 * if something kept it through both young collections (what V8 then copies into the old generation). Pretenuring
 * is off, as in a started service. Sets V8 flags for the whole test process.
 */
export async function oldGenerationGrowthPer(items: number, run: () => unknown): Promise<number> {
  setFlagsFromString('--expose-gc');
  disablePretenuring();
  const gc = runInNewContext('gc') as (options: { type: 'minor' | 'major'; execution: 'sync' }) => void;
  const oldGeneration = () =>
    getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
  gc({ type: 'major', execution: 'sync' });
  const before = oldGeneration();
  await run();
  gc({ type: 'minor', execution: 'sync' });
  gc({ type: 'minor', execution: 'sync' });
  return (oldGeneration() - before) / items;
}
