import type { ClusterCoordination } from '../storage/cluster-ports.ts';

export interface PeriodicJobOptions {
  /** Names the job across instances: two instances sharing a store never run the same name at once. */
  readonly name: string;
  readonly intervalMillis: number;
  readonly cluster: ClusterCoordination;
  /** One run; it should do bounded work (a sweep in batches) and may be skipped when another instance runs it. */
  readonly run: () => Promise<void>;
  /** A run that threw: the job goes on at its next tick. */
  readonly onError: (error: unknown) => void;
  /** How long an instance may hold the job before another may take it (default: ten intervals, at least 60 s). */
  readonly claimMillis?: number;
}

export interface PeriodicJob {
  /** Runs the job now (as a tick would) and answers whether this instance ran it. */
  runNow(): Promise<boolean>;
  /** Stops the ticks and waits for a run in progress to end. */
  stop(): Promise<void>;
}

/**
 * A job that runs every `intervalMillis` on exactly one of the instances sharing a store at a time (a periodic
 * sweep such as retention). Ticks never overlap on one instance; a tick that finds the job running elsewhere skips.
 */
export function startPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const claimMillis = options.claimMillis ?? Math.max(60_000, options.intervalMillis * 10);
  let running: Promise<boolean> | undefined;

  const runNow = (): Promise<boolean> => {
    running ??= options.cluster.runExclusive(options.name, claimMillis, options.run).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (!running) runNow().catch(options.onError);
  }, options.intervalMillis);
  timer.unref();

  return {
    runNow,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
