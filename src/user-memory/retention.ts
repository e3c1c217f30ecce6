import { startPeriodicJob, type PeriodicJob } from '../ops/periodic-job.ts';
import type { ClusterCoordination } from '../storage/cluster-ports.ts';
import type { UserPropertyStore } from '../storage/runtime-ports.ts';
import type { UserMemoryService } from './service.ts';

/**
 * The retention sweep of `svc.usermemories.deleteOlderThanDays`: removes memory entries and long-term properties
 * last written more than that many days ago (the original keeps both in one user-memory store, which the setting
 * sweeps). Runs hourly and once at start, on one instance at a time when several share PostgreSQL.
 */

const SWEEP_INTERVAL_MILLIS = 3_600_000;
const DAY_MILLIS = 86_400_000;

export interface RetentionOptions {
  readonly days: number;
  readonly cluster: ClusterCoordination;
  readonly memories: UserMemoryService;
  readonly properties: UserPropertyStore;
  readonly clock: () => number;
  readonly log: {
    info(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
  };
}

/** The sweep's job, or undefined when retention is off (a negative number of days). */
export function startUserMemoryRetention(options: RetentionOptions): PeriodicJob | undefined {
  if (options.days < 0) return undefined;
  const onError = (error: unknown) =>
    options.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'user-memory retention failed');
  const job = startPeriodicJob({
    name: 'user-memory-retention',
    intervalMillis: SWEEP_INTERVAL_MILLIS,
    cluster: options.cluster,
    run: async () => {
      const cutoff = options.clock() - options.days * DAY_MILLIS;
      const memories = await options.memories.deleteWrittenBefore(cutoff);
      const properties = await options.properties.deleteOlderThan(cutoff);
      if (memories + properties > 0)
        options.log.info(
          { memories, longTermProperties: properties, olderThanDays: options.days },
          'user-memory retention removed old entries',
        );
    },
    onError,
  });
  job.runNow().catch(onError);
  return job;
}
