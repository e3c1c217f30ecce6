import { setFlagsFromString } from 'node:v8';

/**
 * Turns V8's allocation-site pretenuring off for this process (a process-wide V8 setting, read at every
 * collection; set at start-up, before the first turn).
 *
 * V8 watches each object-literal site: once most of its objects survived a young-generation collection, every
 * later object of that site is allocated in the old generation directly. Which sites it picks depends on the
 * moment (start-up, the first burst of turns, a collection that met a batch in flight): a turn's step entries, its
 * audit drafts or its template data were picked in some runs and not in others. From then on each turn left those
 * objects in the old generation, dead a millisecond later, for the next full collection to find, whose marking
 * holds the event loop (issue 15, latency). `npm run bench:stalls` at 900 turns/s, 20 s, three runs each way
 * alternating: with pretenuring 7, 4 and 7 full collections, client p99 44 / 21 / 57 ms and maximum 111 / 60 /
 * 162 ms; without it 4, 4 and 4, p99 17 / 27 / 31 ms and maximum 46 / 77 / 91 ms. In the sampled allocations of
 * one run each way, what survived a young collection halved (163 → 86 MB in 15 s).
 */
export function disablePretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
