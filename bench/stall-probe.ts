/**
 * Preloaded into the service by `npm run bench:stalls` (`node --import ./bench/stall-probe.ts src/main.ts`): an
 * event-loop delay histogram and the garbage collector's pauses, over a window the harness marks with SIGUSR2. The
 * first signal starts the window; each later one writes what the window saw to `STALL_PROBE_OUT` (JSON) and starts
 * a new one. Nothing here runs on the turn path except the histogram's own timer.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';

const out = process.env.STALL_PROBE_OUT;
if (out === undefined) throw new Error('stall-probe: STALL_PROBE_OUT is not set');

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let gcPauses: Array<{ atMs: number; ms: number; kind: number }> = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
    gcPauses.push({ atMs: entry.startTime, ms: entry.duration, kind });
  }
}).observe({ entryTypes: ['gc'] });

let windowStart = performance.now();
let windows = 0;
/**
 * With STALL_PROBE_SURVIVORS=<file>: a sampling heap profile of the window's allocations that survived a young
 * collection (those the young collector copies; kept even if a full collection freed them later), by allocation
 * site, written to that file (Chrome DevTools opens it as a `.heapprofile`).
 */
const survivorsOut = process.env.STALL_PROBE_SURVIVORS;
const heapProfiler = survivorsOut === undefined ? undefined : new Session();
heapProfiler?.connect();

process.on('SIGUSR2', () => {
  if (heapProfiler && survivorsOut) {
    if (windows === 0) {
      heapProfiler.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: false,
      });
    } else {
      heapProfiler.post('HeapProfiler.stopSampling', (error, result) => {
        if (!error) writeFileSync(survivorsOut, JSON.stringify(result.profile));
      });
    }
  }
  if (windows++ > 0) {
    const ms = (nanos: number) => nanos / 1e6;
    writeFileSync(
      out,
      JSON.stringify({
        seconds: (performance.now() - windowStart) / 1000,
        /** The window on the process's clock (ms since it started), to find it in `--trace-gc-nvp` lines. */
        windowMs: { from: windowStart, to: performance.now() },
        loopDelayMs: {
          p50: ms(delay.percentile(50)),
          p99: ms(delay.percentile(99)),
          p999: ms(delay.percentile(99.9)),
          max: ms(delay.max),
        },
        gcPauses,
      }),
    );
  }
  delay.reset();
  gcPauses = [];
  windowStart = performance.now();
});
