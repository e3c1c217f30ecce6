/**
 * Event-loop blocks read from a V8 CPU profile (`node --cpu-prof`): Node marks the samples taken while the loop waits
 * for I/O as `(idle)`, so a maximal run of other samples is a stretch in which the loop answered nothing new. Each
 * sample is attributed to a cause, the outermost frame of the project's own code on its stack (the callback the
 * loop dispatched: a route handler, the group commit's flush, the audit ledger's drain, ...), or the collector, or
 * the outermost library frame when no project code is on the stack. A block is split into segments of one cause:
 * a segment is about one synchronous piece of work (or several of the same kind back to back).
 */
import { relative } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  /** Microseconds on the monotonic clock (the clock of `process.hrtime`). */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export const GC = '(garbage collector)';
/**
 * Time between two samples beyond `OFF_CPU_AFTER_MICROS`: the thread (or the sampler) did not run, e.g. another
 * process had the core. On a shared machine this is not the service's work, so it is a cause of its own.
 */
export const OFF_CPU = '(off CPU: the core was busy elsewhere)';
const OFF_CPU_AFTER_MICROS = 1000;

export interface Segment {
  readonly cause: string;
  readonly startMicros: number;
  readonly micros: number;
  /** The leaf functions that took the segment's samples, by time. */
  readonly leaves: Map<string, number>;
}

export interface Block {
  readonly startMicros: number;
  readonly micros: number;
  readonly segments: readonly Segment[];
}

/** The blocks (runs of non-idle samples) that start within `[fromMicros, toMicros]`, in time order. */
export function blocksOf(profile: CpuProfile, projectRoot: string, fromMicros: number, toMicros: number): Block[] {
  const attribution = attribute(profile, projectRoot);
  const blocks: Block[] = [];
  let segments: Segment[] = [];
  let blockStart = -1;
  let time = profile.startTime;
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    time += timeDeltas[i]!;
    const next = time + (timeDeltas[i + 1] ?? 0);
    const node = attribution.get(samples[i]!)!;
    if (node.cause === IDLE || time < fromMicros || time > toMicros) {
      if (blockStart >= 0) blocks.push({ startMicros: blockStart, micros: time - blockStart, segments });
      blockStart = -1;
      segments = [];
      continue;
    }
    if (blockStart < 0) blockStart = time;
    const last = segments.at(-1);
    // `(program)` is native glue between callbacks: it belongs to the piece of work it sits in.
    const cause = node.cause === PROGRAM && last && last.cause !== OFF_CPU ? last.cause : node.cause;
    const span = next - time;
    const offCpu = Math.max(0, span - OFF_CPU_AFTER_MICROS);
    add(segments, cause, time, span - offCpu, node.leaf);
    if (offCpu > 0) add(segments, OFF_CPU, time, offCpu, OFF_CPU);
  }
  return blocks;
}

function add(segments: Segment[], cause: string, time: number, micros: number, leaf: string): void {
  let segment = segments.at(-1);
  if (segment === undefined || segment.cause !== cause) {
    segment = { cause, startMicros: time, micros: 0, leaves: new Map() };
    segments.push(segment);
  }
  (segment as { micros: number }).micros += micros;
  segment.leaves.set(leaf, (segment.leaves.get(leaf) ?? 0) + micros);
}

const IDLE = '(idle)';
const PROGRAM = '(program)';

function attribute(profile: CpuProfile, projectRoot: string): Map<number, { cause: string; leaf: string }> {
  const parents = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const project = `file://${projectRoot.endsWith('/') ? projectRoot : `${projectRoot}/`}`;
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.startsWith(project)
      ? relative(projectRoot, new URL(url).pathname)
      : url.replace(/^.*node_modules\//, '');
    return `${functionName || '(anonymous)'}${where ? ` ${where}:${lineNumber + 1}` : ''}`;
  };
  const result = new Map<number, { cause: string; leaf: string }>();
  for (const node of profile.nodes) {
    const name = node.callFrame.functionName;
    if (name === IDLE || name === PROGRAM || name === GC || name === '(root)') {
      result.set(node.id, { cause: name, leaf: name });
      continue;
    }
    let outermostOwn: ProfileNode | undefined;
    let outermostLibrary: ProfileNode | undefined;
    for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id)) {
      const frame = byId.get(id)!;
      const { url } = frame.callFrame;
      if (url.startsWith(project) && !url.includes('/node_modules/')) outermostOwn = frame;
      else if (url.includes('/node_modules/')) outermostLibrary = frame;
    }
    const cause = outermostOwn ?? outermostLibrary;
    result.set(node.id, { cause: cause ? label(cause) : label(node), leaf: label(node) });
  }
  return result;
}
