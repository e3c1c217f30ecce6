import type { HotCounter, HotHistogram } from './hot-meters.ts';

/**
 * Recent history of the service's own meters for the manager's charts (`GET /q/metrics/series`): the turn counter,
 * the turn duration histogram and the LLM cost counter are sampled in process into two rings of fixed size, the last
 * hour at 10 s steps and the last day at 1 min steps. A point holds what happened during its step: turns, errors
 * (ERROR and TIMEOUT), duration percentiles (interpolated within the histogram's buckets, as Prometheus'
 * `histogram_quantile` does) and LLM cost, plus turns and errors per agent for the window's totals.
 * The figures are this instance's; each instance of a cluster keeps its own.
 */

export type SeriesWindow = 'hour' | 'day';
export const SERIES_WINDOWS: readonly SeriesWindow[] = ['hour', 'day'];

export interface SeriesPoint {
  /** Start of the step, epoch milliseconds. */
  readonly t: number;
  readonly turns: number;
  readonly errors: number;
  /** Turn duration percentiles in milliseconds; null when the step had no turn. */
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
  readonly llmCostUsd: number;
}

export interface Series {
  readonly window: SeriesWindow;
  readonly stepSeconds: number;
  /** Oldest first; the last point is the step in progress. */
  readonly points: SeriesPoint[];
  /** Turns and errors per agent over the window, most turns first. */
  readonly byAgent: Array<{ agentId: string; turns: number; errors: number }>;
}

/** What the series reads: the turn counter and histogram, the LLM cost counter. */
export interface SeriesSources {
  readonly turns: HotCounter<'agent_id' | 'outcome'>;
  readonly turnDuration: HotHistogram<'agent_id'>;
  readonly llmCost: HotCounter<'provider' | 'model'>;
}

/** Cumulative figures at one moment. */
interface Snapshot {
  readonly byAgent: Map<string, AgentFigures>;
  /** Cumulative count per bucket upper bound (seconds), over all agents; `+Inf` last. */
  readonly buckets: Map<number, number>;
  readonly costUsd: number;
}

interface AgentFigures {
  turns: number;
  errors: number;
}

interface StoredPoint extends SeriesPoint {
  /** Agents that had turns in the step. */
  readonly byAgent: ReadonlyMap<string, AgentFigures>;
}

const ERROR_OUTCOMES = new Set(['ERROR', 'TIMEOUT']);

async function snapshotOf(sources: SeriesSources): Promise<Snapshot> {
  const [turns, durations, cost] = await Promise.all([
    sources.turns.get(),
    sources.turnDuration.get(),
    sources.llmCost.get(),
  ]);
  const byAgent = new Map<string, AgentFigures>();
  for (const { labels, value } of turns.values) {
    const agentId = String(labels.agent_id);
    let figures = byAgent.get(agentId);
    if (figures === undefined) {
      figures = { turns: 0, errors: 0 };
      byAgent.set(agentId, figures);
    }
    figures.turns += value;
    if (ERROR_OUTCOMES.has(String(labels.outcome))) figures.errors += value;
  }
  const buckets = new Map<number, number>();
  for (const { labels, value, metricName } of durations.values) {
    if (metricName === undefined || !metricName.endsWith('_bucket')) continue;
    const le = (labels as { le?: string | number }).le;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + value);
  }
  let costUsd = 0;
  for (const { value } of cost.values) costUsd += value;
  return { byAgent, buckets, costUsd };
}

/** The `q` quantile (0..1) of the observations between two snapshots, in milliseconds; null without any. */
function quantileMs(later: Snapshot, earlier: Snapshot, q: number): number | null {
  const bounds = [...later.buckets.keys()].sort((a, b) => a - b);
  const counts = bounds.map((bound) => (later.buckets.get(bound) ?? 0) - (earlier.buckets.get(bound) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [index, bound] of bounds.entries()) {
    const count = counts[index]!;
    if (count >= rank) {
      // Past the last finite bucket the value is unknown: answer that bound, as Prometheus does.
      if (bound === Number.POSITIVE_INFINITY) return lowerBound * 1000;
      const inBucket = count - lowerCount;
      const fraction = inBucket <= 0 ? 1 : (rank - lowerCount) / inBucket;
      return Math.round((lowerBound + (bound - lowerBound) * fraction) * 1000 * 1000) / 1000;
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound * 1000;
}

function pointBetween(t: number, later: Snapshot, earlier: Snapshot): StoredPoint {
  const byAgent = new Map<string, AgentFigures>();
  let turns = 0;
  let errors = 0;
  for (const [agentId, figures] of later.byAgent) {
    const before = earlier.byAgent.get(agentId);
    const step = { turns: figures.turns - (before?.turns ?? 0), errors: figures.errors - (before?.errors ?? 0) };
    if (step.turns <= 0 && step.errors <= 0) continue;
    byAgent.set(agentId, step);
    turns += step.turns;
    errors += step.errors;
  }
  return {
    t,
    turns,
    errors,
    p50Ms: quantileMs(later, earlier, 0.5),
    p95Ms: quantileMs(later, earlier, 0.95),
    p99Ms: quantileMs(later, earlier, 0.99),
    llmCostUsd: Math.max(0, later.costUsd - earlier.costUsd),
    byAgent,
  };
}

/** The points of one window: a ring of `capacity` closed steps plus the step in progress. */
class Ring {
  readonly stepMs: number;
  readonly #capacity: number;
  readonly #points: StoredPoint[] = [];
  #next = 0;
  /** Start of the step in progress and the figures at its start. */
  #stepStart: number;
  #atStepStart: Snapshot;

  constructor(stepMs: number, capacity: number, now: number, initial: Snapshot) {
    this.stepMs = stepMs;
    this.#capacity = capacity;
    this.#stepStart = this.#align(now);
    this.#atStepStart = initial;
  }

  #align(time: number): number {
    return time - (time % this.stepMs);
  }

  /** Closes the step in progress when `now` is past it (steps with no sample in them are left out). */
  advance(now: number, current: Snapshot): void {
    if (now < this.#stepStart + this.stepMs) return;
    const point = pointBetween(this.#stepStart, current, this.#atStepStart);
    if (this.#points.length < this.#capacity) this.#points.push(point);
    else this.#points[this.#next] = point;
    this.#next = (this.#next + 1) % this.#capacity;
    this.#stepStart = this.#align(now);
    this.#atStepStart = current;
  }

  /** Closed points within the window, oldest first, then the step in progress up to `current`. */
  points(now: number, current: Snapshot): StoredPoint[] {
    const ordered =
      this.#points.length < this.#capacity
        ? [...this.#points]
        : [...this.#points.slice(this.#next), ...this.#points.slice(0, this.#next)];
    const oldest = this.#align(now) - this.#capacity * this.stepMs;
    return [...ordered.filter((point) => point.t >= oldest), pointBetween(this.#stepStart, current, this.#atStepStart)];
  }
}

const HOUR_STEP_MS = 10_000;
const DAY_STEP_MS = 60_000;

export class MetricSeries {
  readonly #sources: SeriesSources;
  readonly #clock: () => number;
  #rings: Record<SeriesWindow, Ring> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(sources: SeriesSources, clock: () => number = Date.now) {
    this.#sources = sources;
    this.#clock = clock;
  }

  /** Starts sampling every 10 s (the hour window's step). */
  start(): void {
    if (this.#timer !== undefined) return;
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), HOUR_STEP_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the meters and closes the steps that are over (the timer calls it; tests call it with their clock). */
  async sample(): Promise<void> {
    const now = this.#clock();
    const current = await snapshotOf(this.#sources);
    if (this.#rings === undefined) {
      this.#rings = {
        hour: new Ring(HOUR_STEP_MS, 3600_000 / HOUR_STEP_MS, now, current),
        day: new Ring(DAY_STEP_MS, 86_400_000 / DAY_STEP_MS, now, current),
      };
      return;
    }
    this.#rings.hour.advance(now, current);
    this.#rings.day.advance(now, current);
  }

  async series(window: SeriesWindow): Promise<Series> {
    if (this.#rings === undefined) await this.sample();
    const ring = this.#rings![window];
    const now = this.#clock();
    const stored = ring.points(now, await snapshotOf(this.#sources));
    const totals = new Map<string, AgentFigures>();
    for (const point of stored) {
      for (const [agentId, figures] of point.byAgent) {
        const total = totals.get(agentId) ?? { turns: 0, errors: 0 };
        total.turns += figures.turns;
        total.errors += figures.errors;
        totals.set(agentId, total);
      }
    }
    return {
      window,
      stepSeconds: ring.stepMs / 1000,
      points: stored.map(({ byAgent: _byAgent, ...point }) => point),
      byAgent: [...totals]
        .map(([agentId, figures]) => ({ agentId, ...figures }))
        .sort((a, b) => b.turns - a.turns || a.agentId.localeCompare(b.agentId)),
    };
  }
}
