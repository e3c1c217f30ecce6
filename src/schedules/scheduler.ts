import type { FastifyBaseLogger } from 'fastify';
import { newId } from '../ids.ts';
import type { Schedule } from '../resources/schemas/schedule.ts';
import type { ResourceService } from '../resources/service.ts';
import { parseContext } from '../runtime/context.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import type { Conversation } from '../runtime/memory.ts';
import type { CallerAccess } from '../security/access.ts';
import type { ClusterCoordination } from '../storage/cluster-ports.ts';
import type { ConfigResourceStore } from '../storage/ports.ts';
import type { RunResult, ScheduleRunRecord, ScheduleRunStore } from '../storage/schedule-run-ports.ts';
import { latestDue, nextDue, type Timing } from './schedule-times.ts';

/**
 * Schedules (issue 18). Every instance looks for due runs every `svc.schedules.poll-interval-millis`. For each
 * enabled schedule it takes the schedule's cluster-wide lock (the conversations' lock, on PostgreSQL an advisory
 * lock), finds the latest due time after the last recorded run and records a run for it; the (schedule, due time)
 * key is unique, so of all instances exactly one records it, and only that one sends the message, through the
 * ordinary conversation path. A due time found more than `svc.schedules.missed-after-seconds` late was missed
 * while every instance was down: recorded as SKIPPED, or run once for all the missed ones (`missedRuns: catchUp`).
 * A run whose instance dies while it runs stays RUNNING: a run is never sent twice.
 */

const PAGE = 500;
const LOCK_CLAIM_MILLIS = 10_000;
const MAX_LISTED_RUNS = 100;

export interface ScheduleHistory {
  readonly scheduleId: string;
  readonly enabled: boolean;
  /** The next due time after the last run (in the past while a due run is still to be picked up). */
  readonly nextRunOn?: number | undefined;
  readonly runs: readonly ScheduleRunRecord[];
}

export interface SchedulerOptions {
  readonly resources: ResourceService;
  readonly store: ConfigResourceStore;
  readonly runs: ScheduleRunStore;
  readonly conversations: ConversationService;
  readonly cluster: ClusterCoordination;
  readonly missedAfterMillis: number;
  readonly log: FastifyBaseLogger;
  readonly clock?: () => number;
}

interface LiveSchedule {
  readonly id: string;
  readonly schedule: Schedule;
  /** When the current version was written: no run is due before it. */
  readonly since: number;
}

export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #clock: () => number;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Looks for due runs every `intervalMillis` (0: never) until `close`. */
  start(intervalMillis: number): void {
    if (intervalMillis <= 0) return;
    this.#timer = setInterval(() => {
      // A store that cannot be reached (PostgreSQL restarting) fails this tick only: the next one tries again
      if (this.#ticking === undefined)
        this.tick().catch((error: unknown) =>
          this.#options.log.warn({ err: error }, 'due schedules could not be looked at; trying again'),
        );
    }, intervalMillis);
    this.#timer.unref();
  }

  /** Runs what is due now; resolves when those runs have finished. */
  async tick(): Promise<void> {
    this.#ticking = this.#runDue().finally(() => {
      this.#ticking = undefined;
    });
    await this.#ticking;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking?.catch(() => undefined);
  }

  /** A schedule's runs, latest first, and when it is next due (USE on the schedule). */
  async history(scheduleId: string, caller?: CallerAccess): Promise<ScheduleHistory> {
    const { resources, runs } = this.#options;
    const version = await resources.currentVersion('schedule', scheduleId, caller);
    const schedule = JSON.parse(await resources.read('schedule', scheduleId, version, caller)) as Schedule;
    const since = (await this.#options.store.descriptor('schedule', scheduleId))?.lastModifiedOn ?? 0;
    const listed = await runs.list(scheduleId, MAX_LISTED_RUNS);
    const enabled = schedule.enabled !== false;
    const after = Math.max(since, listed[0]?.dueOn ?? 0);
    return {
      scheduleId,
      enabled,
      nextRunOn: enabled ? nextDue(timingOf(schedule, since), after) : undefined,
      runs: listed,
    };
  }

  async #runDue(): Promise<void> {
    const due: Promise<void>[] = [];
    for await (const live of this.#liveSchedules()) {
      if (live.schedule.enabled !== false) due.push(this.#runIfDue(live));
    }
    await Promise.all(due);
  }

  async *#liveSchedules(): AsyncGenerator<LiveSchedule> {
    const { store } = this.#options;
    for (let index = 0; ; index++) {
      const page = await store.listDescriptors('schedule', { filter: '', index, limit: PAGE });
      for (const descriptor of page) {
        const body = await store.read('schedule', descriptor.id, descriptor.currentVersion);
        if (body !== undefined)
          yield { id: descriptor.id, schedule: JSON.parse(body) as Schedule, since: descriptor.lastModifiedOn };
      }
      if (page.length < PAGE) return;
    }
  }

  async #runIfDue(live: LiveSchedule): Promise<void> {
    try {
      const run = await this.#options.cluster.withConversationLock(`schedule:${live.id}`, LOCK_CLAIM_MILLIS, () =>
        this.#claimDueRun(live),
      );
      if (run !== undefined) await this.#options.runs.finish(live.id, run.id, await this.#send(live, run));
    } catch (error) {
      this.#options.log.warn({ err: error, scheduleId: live.id }, 'schedule run could not be recorded');
    }
  }

  /** Records the latest due run after the last recorded one; undefined when none is due or another instance has it. */
  async #claimDueRun({ id, schedule, since }: LiveSchedule): Promise<ScheduleRunRecord | undefined> {
    const { runs, missedAfterMillis } = this.#options;
    const [last] = await runs.list(id, 1);
    const now = this.#clock();
    const dueOn = latestDue(timingOf(schedule, since), Math.max(since, last?.dueOn ?? 0), now);
    if (dueOn === undefined) return undefined;
    const skipped = now - dueOn > missedAfterMillis && schedule.missedRuns !== 'catchUp';
    const run: ScheduleRunRecord = {
      id: newId(now),
      scheduleId: id,
      dueOn,
      startedOn: now,
      ...(skipped
        ? {
            outcome: 'SKIPPED',
            finishedOn: now,
            detail: `Due at ${new Date(dueOn).toISOString()} but found ${Math.round((now - dueOn) / 1000)} s later (missedRuns: skip).`,
          }
        : { outcome: 'RUNNING' }),
    };
    return (await runs.claim(run)) && !skipped ? run : undefined;
  }

  /** Sends the schedule's message through the ordinary conversation path. */
  async #send({ id, schedule }: LiveSchedule, run: ScheduleRunRecord): Promise<RunResult> {
    const { conversations } = this.#options;
    const finished = (outcome: RunResult['outcome'], conversationId?: string, detail?: string): RunResult => ({
      finishedOn: this.#clock(),
      outcome,
      conversationId,
      detail,
    });
    try {
      const context = parseContext(schedule.context);
      const continued = schedule.conversation === 'persistent' ? await this.#openConversation(id) : undefined;
      const conversation = continued
        ? await conversations.say(continued.id, { input: schedule.message, context })
        : await conversations.start(schedule.agentId, normalizeEnvironment(schedule.environment), {
            userId: schedule.userId ?? `schedule-${id}`,
            input: schedule.message,
            context,
          });
      return conversation.state === 'ERROR'
        ? finished('ERROR', conversation.id, 'The turn ended in ERROR; see the conversation.')
        : finished('OK', conversation.id);
    } catch (error) {
      this.#options.log.warn({ err: error, scheduleId: id, runId: run.id }, 'schedule run failed');
      return finished('FAILED', undefined, (error as Error).message);
    }
  }

  /** The persistent conversation of a schedule, unless it ended or is gone. */
  async #openConversation(scheduleId: string): Promise<Conversation | undefined> {
    const conversationId = await this.#options.runs.lastConversation(scheduleId);
    if (conversationId === undefined) return undefined;
    const conversation = await this.#options.conversations.get(conversationId).catch(() => undefined);
    return conversation?.state === 'ENDED' ? undefined : conversation;
  }
}

function timingOf(schedule: Schedule, since: number): Timing {
  return schedule.cron !== undefined
    ? { cron: schedule.cron, timeZone: schedule.timeZone ?? 'UTC' }
    : { intervalSeconds: schedule.intervalSeconds!, anchor: since };
}
