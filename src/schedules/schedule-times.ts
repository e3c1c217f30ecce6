import { Cron } from 'croner';

/**
 * When a schedule is due: a cron expression in a time zone (five fields, or six with seconds first), or a fixed
 * interval ("heartbeat") counted from an anchor. Times are epoch milliseconds.
 */
export type Timing =
  | { readonly cron: string; readonly timeZone: string }
  | { readonly intervalSeconds: number; readonly anchor: number };

/** Why a cron expression or time zone cannot be used, or undefined when it can. */
export function cronProblem(cron: string, timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    return `'${timeZone}' is not an IANA time zone (such as UTC or Europe/Berlin).`;
  }
  try {
    const fields = cron.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6) return `'${cron}' must have five fields (or six, with seconds first).`;
    cronOf({ cron, timeZone }).nextRun();
    return undefined;
  } catch (error) {
    return `'${cron}' is not a cron expression: ${(error as Error).message}`;
  }
}

/** The first due time strictly after `after`. An interval is due one interval after its anchor, then every interval. */
export function nextDue(timing: Timing, after: number): number | undefined {
  if ('intervalSeconds' in timing) {
    const interval = timing.intervalSeconds * 1000;
    return timing.anchor + Math.max(1, Math.floor((after - timing.anchor) / interval) + 1) * interval;
  }
  return cronOf(timing).nextRun(new Date(after))?.getTime();
}

/** The latest due time in (`after`, `until`], or undefined when none falls there. */
export function latestDue(timing: Timing, after: number, until: number): number | undefined {
  const first = nextDue(timing, after);
  if (first === undefined || first > until) return undefined;
  if ('intervalSeconds' in timing) {
    const interval = timing.intervalSeconds * 1000;
    return timing.anchor + Math.floor((until - timing.anchor) / interval) * interval;
  }
  // Cron times are whole seconds; the run before the next whole second is the latest at or before `until`.
  const nextSecond = Math.floor(until / 1000) * 1000 + 1000;
  return Math.max(first, cronOf(timing).previousRuns(1, new Date(nextSecond))[0]?.getTime() ?? first);
}

function cronOf(timing: { readonly cron: string; readonly timeZone: string }): Cron {
  return new Cron(timing.cron, { timezone: timing.timeZone, paused: true });
}
