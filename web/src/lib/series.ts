/**
 * The service's metrics over time (`GET /q/metrics/series?window=hour|day`) -> the columns the dashboard's charts
 * draw. Pure.
 */

export type SeriesWindow = 'hour' | 'day';

export interface SeriesPoint {
  /** Start of the interval, epoch milliseconds. */
  readonly t: number;
  readonly turns: number;
  readonly errors: number;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
  readonly llmCostUsd: number;
}

export interface MetricsSeries {
  readonly window: SeriesWindow;
  /** Length of one interval, seconds. */
  readonly stepSeconds: number;
  readonly points: readonly SeriesPoint[];
  readonly byAgent: readonly { readonly agentId: string; readonly turns: number; readonly errors: number }[];
}

/** Columns for the charts: x in epoch seconds, then one array per line (null = no value in that interval). */
export interface ChartColumns {
  readonly x: number[];
  readonly turnsPerMinute: number[];
  readonly errorsPerMinute: number[];
  readonly p50Ms: (number | null)[];
  readonly p95Ms: (number | null)[];
  readonly p99Ms: (number | null)[];
  readonly llmCostUsd: number[];
}

export interface SeriesTotals {
  readonly turns: number;
  readonly errors: number;
  readonly llmCostUsd: number;
}

/** The chart columns of a series, in time order; rates are per minute whatever the interval. */
export function chartColumns(series: MetricsSeries): ChartColumns {
  const points = [...series.points].sort((a, b) => a.t - b.t);
  const perMinute = 60 / Math.max(1, series.stepSeconds);
  const latency = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    x: points.map((p) => Math.floor(p.t / 1000)),
    turnsPerMinute: points.map((p) => p.turns * perMinute),
    errorsPerMinute: points.map((p) => p.errors * perMinute),
    p50Ms: points.map((p) => latency(p.p50Ms)),
    p95Ms: points.map((p) => latency(p.p95Ms)),
    p99Ms: points.map((p) => latency(p.p99Ms)),
    llmCostUsd: points.map((p) => p.llmCostUsd),
  };
}

export function seriesTotals(series: MetricsSeries): SeriesTotals {
  let turns = 0;
  let errors = 0;
  let llmCostUsd = 0;
  for (const p of series.points) {
    turns += p.turns;
    errors += p.errors;
    llmCostUsd += p.llmCostUsd;
  }
  return { turns, errors, llmCostUsd };
}

/** Agents with errors first (most errors first), then by turns; at most `limit`. */
export function errorsByAgent(series: MetricsSeries, limit = 8): MetricsSeries['byAgent'] {
  return [...series.byAgent]
    .filter((a) => a.turns > 0 || a.errors > 0)
    .sort((a, b) => b.errors - a.errors || b.turns - a.turns)
    .slice(0, limit);
}

export function formatUsd(value: number): string {
  return value === 0 ? '$0' : value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}
