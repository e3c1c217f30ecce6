/**
 * What V8's `--trace-gc-nvp` lines say of the young collections of a window: how much the program allocated, how
 * much outlived two young collections (promoted to the old generation, where only a full collection frees it) and
 * how long the collections paused it. Objects of a turn should die young; promoted bytes beyond what the service
 * keeps (the steps its conversation cache adds) are objects something kept alive past their use.
 */
export interface YoungCollections {
  readonly count: number;
  readonly allocatedBytes: number;
  readonly promotedBytes: number;
  readonly pauseMs: { readonly median: number; readonly max: number };
  readonly fullCollections: number;
}

/** The collections whose time stamp (ms since the process's V8 started) falls within [fromMs, toMs]. */
export function youngCollectionsIn(trace: string, fromMs: number, toMs: number): YoungCollections | undefined {
  const young: Array<Record<string, number>> = [];
  let fullCollections = 0;
  for (const line of trace.split('\n')) {
    const match = /\]\s+(\d+) ms: (pause=.*)$/.exec(line);
    if (!match || Number(match[1]) < fromMs || Number(match[1]) > toMs) continue;
    const fields = Object.fromEntries(match[2]!.split(' ').map((pair) => pair.split('=')));
    if (fields.gc === 's')
      young.push({
        pause: Number(fields.pause),
        allocated: Number(fields.allocated),
        promoted: Number(fields.promoted),
      });
    else if (fields.gc === 'mc') fullCollections++;
  }
  if (young.length === 0) return undefined;
  const pauses = young.map((collection) => collection.pause!).sort((a, b) => a - b);
  const sum = (field: string) => young.reduce((total, collection) => total + collection[field]!, 0);
  return {
    count: young.length,
    allocatedBytes: sum('allocated'),
    promotedBytes: sum('promoted'),
    pauseMs: { median: pauses[Math.floor(pauses.length / 2)]!, max: pauses.at(-1)! },
    fullCollections,
  };
}
