import { setImmediate as yieldToTurns } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConversationService } from '../runtime/conversations.ts';
import type { ConversationStore, InactiveConversation, UserPropertyStore } from '../storage/runtime-ports.ts';
import type { ServiceEvent } from './audit.ts';

/**
 * Retention: deletes ENDED conversations after `endedDays`, conversations in any other state idle (not modified)
 * for `idleDays`, and user-memory entries and long-term properties not written for `userMemoryDays` (-1 = that part is off).
 *
 * A sweep runs on one instance at a time (the server runs it as a periodic job under the cluster's exclusive lock).
 * Conversations go in pages of `batchSize`, oldest first, one delete at a time under the conversation's lock with
 * the age checked again there (a turn that ran meanwhile keeps its conversation; one in flight here is skipped),
 * and the event loop is yielded between pages, so turns are not stalled. A sweep deletes at most
 * `MAX_PAGES_PER_SWEEP` pages of each kind; the rest waits for the next run.
 */

export const RETENTION_AUDIT_CHAIN = 'retention';
const MAX_PAGES_PER_SWEEP = 100;
const DAY_MILLIS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  readonly conversations: ConversationService;
  readonly store: ConversationStore;
  readonly userProperties: UserPropertyStore;
  readonly userMemories: { deleteWrittenBefore(cutoff: number): Promise<number> };
  readonly endedDays: number;
  readonly idleDays: number;
  /** `svc.usermemories.deleteOlderThanDays`: user-memory entries and long-term properties (the original keeps both in its user-memory store). */
  readonly userMemoryDays: number;
  readonly batchSize: number;
  /** Meters go here (`svc_retention_*`). */
  readonly registry: Registry;
  /** Where a sweep that deleted something (or failed) is recorded; counts and settings only. */
  readonly audit?: { recordServiceEvent(chain: string, event: ServiceEvent): Promise<void> } | undefined;
  readonly log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly clock?: (() => number) | undefined;
}

export interface RetentionReport {
  readonly endedConversationsDeleted: number;
  readonly idleConversationsDeleted: number;
  /** Conversations old enough but busy with a turn on this instance; the next sweep looks at them again. */
  readonly conversationsSkippedBusy: number;
  readonly longTermPropertiesDeleted: number;
  readonly userMemoriesDeleted: number;
}

type DeletedKind = 'ended_conversations' | 'idle_conversations' | 'long_term_properties' | 'user_memories';

export class Retention {
  readonly #options: RetentionOptions;
  readonly #clock: () => number;
  readonly #deleted: Counter<'kind'>;
  readonly #skipped: Counter;
  readonly #runs: Counter<'outcome'>;
  readonly #lastSuccess: Gauge;

  constructor(options: RetentionOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    const registers = [options.registry];
    this.#deleted = new Counter({
      name: 'svc_retention_deleted_total',
      help: 'Records deleted by the retention sweep, by kind (ended_conversations, idle_conversations, long_term_properties, user_memories)',
      labelNames: ['kind'] as const,
      registers,
    });
    this.#skipped = new Counter({
      name: 'svc_retention_conversations_skipped_total',
      help: 'Conversations old enough for retention but skipped because a turn was running on them',
      registers,
    });
    this.#runs = new Counter({
      name: 'svc_retention_runs_total',
      help: 'Retention sweeps this instance ran, by outcome (completed, failed)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.#lastSuccess = new Gauge({
      name: 'svc_retention_last_success_timestamp_seconds',
      help: 'When this instance last completed a retention sweep (epoch seconds; 0 = never)',
      registers,
    });
  }

  /** Whether any retention setting is on. */
  get enabled(): boolean {
    const { endedDays, idleDays, userMemoryDays } = this.#options;
    return endedDays >= 0 || idleDays >= 0 || userMemoryDays >= 0;
  }

  /**
   * One sweep (call it where only one instance runs it at a time); recorded in the meters and the audit ledger. A
   * failure ends the sweep (logged, counted, recorded) with what it deleted so far; the next run goes on.
   */
  async sweep(): Promise<RetentionReport> {
    const started = this.#clock();
    const { endedDays, idleDays, userMemoryDays } = this.#options;
    const cutoff = (days: number) => (days < 0 ? undefined : started - days * DAY_MILLIS);
    const cutoffs = { ended: cutoff(endedDays), idle: cutoff(idleDays), longTerm: cutoff(userMemoryDays) };
    const report = {
      endedConversationsDeleted: 0,
      idleConversationsDeleted: 0,
      conversationsSkippedBusy: 0,
      longTermPropertiesDeleted: 0,
      userMemoriesDeleted: 0,
    };
    const input = {
      endedConversationsAfterDays: endedDays,
      idleConversationsAfterDays: idleDays,
      userMemoriesAfterDays: userMemoryDays,
      ...(cutoffs.ended === undefined ? {} : { endedCutoff: new Date(cutoffs.ended).toISOString() }),
      ...(cutoffs.idle === undefined ? {} : { idleCutoff: new Date(cutoffs.idle).toISOString() }),
      ...(cutoffs.longTerm === undefined ? {} : { longTermPropertiesCutoff: new Date(cutoffs.longTerm).toISOString() }),
    };
    try {
      if (cutoffs.ended !== undefined) await this.#sweepConversations(true, cutoffs.ended, report);
      if (cutoffs.idle !== undefined) await this.#sweepConversations(false, cutoffs.idle, report);
      if (cutoffs.longTerm !== undefined) {
        report.longTermPropertiesDeleted = await this.#options.userProperties.deleteOlderThan(cutoffs.longTerm);
        this.#count('long_term_properties', report.longTermPropertiesDeleted);
        report.userMemoriesDeleted = await this.#options.userMemories.deleteWrittenBefore(cutoffs.longTerm);
        this.#count('user_memories', report.userMemoriesDeleted);
      }
    } catch (error) {
      this.#runs.inc({ outcome: 'failed' });
      // Only the kind of failure: a store error's text may quote a connection string.
      const failure = `retention sweep failed: ${failureOf(error)}`;
      this.#options.log.error({ ...report, failure }, 'retention sweep failed; the next run goes on');
      await this.#record(input, report, started, failure);
      return report;
    }
    this.#runs.inc({ outcome: 'completed' });
    this.#lastSuccess.set(this.#clock() / 1000);
    const deleted =
      report.endedConversationsDeleted +
      report.idleConversationsDeleted +
      report.longTermPropertiesDeleted +
      report.userMemoriesDeleted;
    if (deleted > 0 || report.conversationsSkippedBusy > 0) {
      this.#options.log.info({ ...report }, 'retention sweep done');
      await this.#record(input, report, started, null);
    }
    return report;
  }

  async #sweepConversations(
    ended: boolean,
    before: number,
    report: { endedConversationsDeleted: number; idleConversationsDeleted: number; conversationsSkippedBusy: number },
  ): Promise<void> {
    const { store, conversations, batchSize } = this.#options;
    let after: InactiveConversation | undefined;
    for (let page = 0; page < MAX_PAGES_PER_SWEEP; page++) {
      const candidates = await store.listInactive({ ended, before, after, limit: batchSize });
      for (const candidate of candidates) {
        const outcome = await conversations.deleteIfInactive(candidate.id, ended, before);
        if (outcome === 'busy') {
          report.conversationsSkippedBusy++;
          this.#skipped.inc();
        } else if (outcome === 'deleted') {
          if (ended) report.endedConversationsDeleted++;
          else report.idleConversationsDeleted++;
          this.#count(ended ? 'ended_conversations' : 'idle_conversations', 1);
        }
      }
      if (candidates.length < batchSize) return;
      after = candidates.at(-1);
      await yieldToTurns();
    }
  }

  #count(kind: DeletedKind, amount: number): void {
    if (amount > 0) this.#deleted.inc({ kind }, amount);
  }

  async #record(
    input: Record<string, unknown>,
    report: RetentionReport,
    started: number,
    failure: string | null,
  ): Promise<void> {
    await this.#options.audit
      ?.recordServiceEvent(RETENTION_AUDIT_CHAIN, {
        type: 'svc.retention',
        input,
        output: { ...report },
        outcome: failure === null ? 'ok' : 'error',
        error: failure,
        durationMs: this.#clock() - started,
      })
      .catch((error: unknown) =>
        this.#options.log.warn(
          { failure: failureOf(error) },
          'the retention sweep could not be recorded in the audit ledger',
        ),
      );
  }
}

function failureOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const name = error instanceof Error ? error.name : typeof error;
  return typeof code === 'string' ? `${name} (${code})` : name;
}
