import autocannon from 'autocannon';

/** One load run against one server. */
export interface LoadSpec {
  readonly connections: number;
  /** Seconds of load (ignored when `amount` is given). */
  readonly duration?: number;
  /** A fixed number of requests instead of a duration. */
  readonly amount?: number;
  /** Seconds of unmeasured load before the run (same connections). */
  readonly warmupSeconds?: number;
  /** JSON request body; none (and no content type) when absent. */
  readonly body?: string;
  /** JSON request bodies, used in turn (round-robin, in step with `paths`) instead of `body`. */
  readonly bodies?: readonly string[];
  /** Request paths, used in turn (round-robin) over all connections. */
  readonly paths: readonly string[];
  /** Requests per second over all connections (an open-loop rate instead of as fast as answers come). */
  readonly rate?: number;
}

export interface Measurement {
  /** Completed 2xx responses. */
  readonly requests: number;
  readonly seconds: number;
  /** 2xx responses per second. */
  readonly reqPerSec: number;
  /** Latency of the 2xx responses in milliseconds (sub-millisecond precision, from each response's own timing). */
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p99: number; readonly max: number };
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Readonly<Record<string, number>>;
}

/**
 * Runs autocannon (programmatic API, in this process; `load.ts` runs it in a child process on its own core) with
 * POST requests against `baseUrl`. Latencies are taken
 * from autocannon's per-response timings rather than its histogram, which keeps whole milliseconds only: too
 * coarse for an echo server that answers in a fraction of one.
 */
export async function measure(baseUrl: string, spec: LoadSpec): Promise<Measurement> {
  const { paths, bodies } = spec;
  const hasBody = spec.body !== undefined || bodies !== undefined;
  const headers: Record<string, string> = hasBody ? { 'content-type': 'application/json' } : {};
  let next = 0;
  const request = {
    method: 'POST',
    headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    setupRequest: (data: { path?: string; body?: string | Buffer }) => {
      const turn = next++;
      return {
        ...data,
        path: paths[turn % paths.length],
        ...(bodies === undefined ? {} : { body: bodies[turn % bodies.length] }),
      };
    },
  };
  const instance = autocannon({
    url: baseUrl,
    connections: spec.connections,
    ...(spec.amount === undefined ? { duration: spec.duration ?? 5 } : { amount: spec.amount }),
    ...(spec.warmupSeconds ? { warmup: { connections: spec.connections, duration: spec.warmupSeconds } } : {}),
    ...(spec.rate === undefined ? {} : { overallRate: spec.rate }),
    requests: [request],
  });
  let latencies = new Float64Array(1 << 14);
  let count = 0;
  // The measured window: from the first request sent to the last response (autocannon's own duration is
  // whole-second for `amount` runs).
  let firstSentAt = Number.NaN;
  let lastAnsweredAt = Number.NaN;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    const now = performance.now();
    if (Number.isNaN(firstSentAt)) firstSentAt = now - responseTime;
    lastAnsweredAt = now;
    if (statusCode < 200 || statusCode >= 300) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTime;
  });
  const result = await instance;

  const sorted = latencies.subarray(0, count).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  const percentile = (p: number) =>
    count === 0 ? NaN : sorted[Math.min(count - 1, Math.max(0, Math.ceil((p / 100) * count) - 1))]!;
  const statusCodes: Record<string, number> = {};
  for (const [code, { count: n }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(n);
  const seconds = count === 0 ? result.duration : (lastAnsweredAt - firstSentAt) / 1000;
  return {
    requests: count,
    seconds,
    reqPerSec: count / seconds,
    latencyMs: {
      mean: count === 0 ? NaN : sum / count,
      p50: percentile(50),
      p99: percentile(99),
      max: count === 0 ? NaN : sorted[count - 1]!,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

/** Why a measurement cannot be trusted (non-2xx answers, connection errors, nothing measured), or undefined. */
export function measurementProblem(measurement: Measurement): string | undefined {
  if (measurement.requests === 0) return 'no successful responses';
  if (measurement.non2xx > 0 || measurement.errors > 0) {
    return `${measurement.non2xx} non-2xx responses, ${measurement.errors} errors (${measurement.timeouts} timeouts); status codes ${JSON.stringify(measurement.statusCodes)}`;
  }
  return undefined;
}
