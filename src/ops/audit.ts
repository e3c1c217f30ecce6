import type { KeyObject } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { dirname } from 'node:path';
import { LRUCache } from 'lru-cache';
import { Counter, Gauge, type Registry } from 'prom-client';
import { newId } from '../ids.ts';
import { retrying, type Backoff } from '../shared/retry.ts';
import type { PipelineObserver, TaskObservation } from '../runtime/pipeline.ts';
import type { Turn } from '../runtime/turn.ts';
import type { AuditBlock, AuditStore } from '../storage/audit-ports.ts';
import { blockDocument, entriesOfBlock } from './audit-block.ts';
import {
  deriveAuditKey,
  errorText,
  hasValidSignature,
  sign,
  summarize,
  type AuditDraft,
  type AuditEntry,
} from './audit-entry.ts';

export type { AuditDraft, AuditEntry } from './audit-entry.ts';

/**
 * The audit ledger (SPEC Events 2, BEHAVIOUR §17): one entry per executed task per turn, appended write-once with
 * an HMAC chain per conversation.
 *
 * Write path: the conversation service numbers a turn's entries under the conversation lock (the counter travels
 * with the stored conversation, so it is consistent across instances), built from the step as memory finally holds
 * it (secret values already scrubbed, request records redacted), and hands them over once the turn is committed:
 * a turn whose commit failed never happened and leaves no entry.
 * `enqueue` takes a committed turn's entries as one block (`audit-block.ts`: stored as one document, each entry
 * after the first as what differs from the one before) into a bounded queue (`svc.audit.max-queue-size` entries;
 * overflow is dropped and counted). Soon after, the queue is flushed in batches: entries are signed there, in order
 * per conversation, chained to the conversation's previous stored entry; a failing batch is retried three times
 * with backoff, then appended to the dead-letter JSONL file (one entry a line) and counted.
 */

/** What the conversation service needs: an observer per turn, its entries when the step is final, and the queue. */
export interface AuditSink {
  recordTurn(): TurnAudit;
  /** Queues the entries of a committed turn (or of several: consecutive sequences of one conversation). */
  enqueue(drafts: readonly AuditDraft[]): void;
}

export interface TurnAudit {
  /** Give to `runPipeline`. */
  readonly observer: PipelineObserver;
  /**
   * One entry per observed task, numbered `lastSequence + 1`, ... Call once the step is final (after
   * `turn.finish()`), so entries show what memory keeps; enqueue them once the turn is committed.
   */
  finish(turn: Turn, lastSequence: number): AuditDraft[];
}

export interface AuditVerification {
  readonly conversationId: string;
  readonly signingEnabled: boolean;
  readonly entriesChecked: number;
  /** Entries whose signature and link to the entry before them hold. */
  readonly valid: number;
  /** Entries whose signature or link does not hold. */
  readonly invalid: number;
  /** Entries stored without a signature. */
  readonly unsigned: number;
  /** Gaps the chain does not bridge: entries removed after they were written. */
  readonly missingSequences: number[];
  /** Gaps the chain bridges: entries that were never written (queue overflow, dead-lettered). */
  readonly undeliveredSequences: number[];
  readonly duplicateSequences: number[];
  readonly intact: boolean;
  readonly tamperingSuspected: boolean;
  readonly problems: Array<{ entryId: string; sequence: number; status: AuditProblemStatus }>;
  readonly verifiedAt: string;
}

/** An event of the service itself (not of a conversation), e.g. a retention sweep: counts and settings only. */
export interface ServiceEvent {
  /** What happened, e.g. `svc.retention`. */
  readonly type: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly output: Readonly<Record<string, unknown>>;
  readonly outcome: 'ok' | 'error';
  readonly error: string | null;
  readonly durationMs: number;
}

export type AuditProblemStatus = 'tampered' | 'chain-broken' | 'unsigned' | 'duplicate' | 'unreadable';

export interface AuditLedgerOptions {
  readonly store: AuditStore;
  /** The vault's master key; without one entries are stored unsigned. */
  readonly masterKey: string | undefined;
  readonly maxQueueSize: number;
  readonly deadLetterPath: string;
  /** Meters go here (`svc_audit_*`). */
  readonly registry: Registry;
  readonly log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void } | undefined;
  /** Attempts to write a batch before it goes to the dead-letter file; default 4, waiting 250, 1000, 4000 ms. */
  readonly writeRetry?: { readonly maxAttempts: number; readonly backoff: Backoff };
  readonly batchSize?: number;
  readonly clock?: () => number;
  /** PBKDF2 work factor of the signing key; only tests lower it. */
  readonly kdfIterations?: number;
}

/** What the ledger reads of a block to order, chain and store it. */
type BlockHead = Omit<AuditBlock, 'document'>;

/**
 * A queued block: its head, and either its stored document (a ledger that does not sign) or its drafts (one that
 * does). Queued for up to `FLUSH_DELAY_MS`, one flat string outlives young-generation collections more cheaply than
 * the drafts' tree of objects; but a signing ledger would parse that string again to sign the entries, which cost
 * ~18 µs a turn more than keeping the drafts (alternating runs of a signing ledger over SQLite).
 */
interface Pending {
  readonly head: BlockHead;
  readonly unsignedDocument?: string;
  readonly drafts?: readonly AuditDraft[];
  /** When a flush first held it back waiting for its predecessor (written by another instance). */
  readonly deferredSince?: number;
}

/** A block signed (or not, without a key) as it is stored; `hmac` is its last entry's. */
interface StorableBlock {
  readonly head: BlockHead;
  readonly hmac: string | null;
  readonly document: string;
}

/** `drafts`: consecutive entries of one conversation, in sequence order; `signing`: whether they will be signed. */
function pendingOf(drafts: readonly AuditDraft[], signing: boolean): Pending {
  const first = drafts[0]!;
  const head: BlockHead = {
    firstId: first.id,
    conversationId: first.conversationId,
    firstSequence: first.sequence,
    entryCount: drafts.length,
    agentId: first.agentId,
    agentVersion: first.agentVersion,
    timestamp: first.timestamp,
  };
  return signing ? { head, drafts } : { head, unsignedDocument: unsignedDocumentOf(drafts) };
}

function unsignedDocumentOf(drafts: readonly AuditDraft[]): string {
  return blockDocument(drafts.map((draft) => sign(undefined, draft, null)));
}

/**
 * The block as it is stored: without a key, unsigned; with one, each entry signed and chained to the one before it,
 * the first to `previousHmac`.
 */
function storable(key: KeyObject | undefined, pending: Pending, previousHmac: string | null): StorableBlock {
  const { head, unsignedDocument, drafts } = pending;
  const unsigned = () => unsignedDocument ?? unsignedDocumentOf(drafts!);
  if (!key) return { head, hmac: null, document: unsigned() };
  let chainEnd = previousHmac;
  const entries = (drafts ?? (entriesOfBlock(unsigned()) as AuditDraft[])).map((draft) => {
    const entry = sign(key, draft, chainEnd);
    chainEnd = entry.hmac;
    return entry;
  });
  return { head, hmac: chainEnd, document: blockDocument(entries) };
}

const lastSequenceOf = (head: BlockHead) => head.firstSequence + head.entryCount - 1;

/** The blocks in order, cut where a batch reaches `entries` entries. */
function batchesOf(blocks: readonly Pending[], entries: number): Pending[][] {
  const batches: Pending[][] = [];
  let batch: Pending[] = [];
  let size = 0;
  for (const block of blocks) {
    batch.push(block);
    size += block.head.entryCount;
    if (size >= entries) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

interface ChainEnd {
  readonly sequence: number;
  readonly hmac: string | null;
}

/** A predecessor written by another instance is waited for this long before the chain goes on without it. */
const MAX_DEFERRAL_MS = 5000;
/** How often entries held back for their predecessor are tried again when nothing else is queued. */
const DEFERRED_RETRY_MS = 1000;
/**
 * Entries are written this soon after they are queued: long enough for several turns to share a write, short
 * enough that most drafts die young (kept for a second, they were promoted and every turn left old-generation
 * garbage behind). `npm run bench:stalls` at 1,750 turns/s, runs alternating: 0.55-0.64 % of the requests took the
 * service over 5 ms at 25 ms (p99 9.4-9.9 ms at the client), 0.78-1.15 % at 100 ms (p99 10.9-14.5 ms); CPU per turn
 * is the same, and the WAL grows a little more per turn (smaller blocks).
 */
const FLUSH_DELAY_MS = 25;
/**
 * Signing a batch gives the event loop back after this long, so requests read meanwhile are answered: a flush
 * signs everything queued for `FLUSH_DELAY_MS` (about 125 entries at the latency benchmark's load).
 */
const SIGNING_SLICE_MS = 1;
/** Conversations whose chain end is remembered (others are read from the store when needed). */
const CHAIN_CACHE_SIZE = 10_000;

export class AuditLedger implements AuditSink {
  readonly #store: AuditStore;
  readonly #options: AuditLedgerOptions;
  readonly #key: Promise<KeyObject | undefined>;
  readonly #clock: () => number;
  readonly #writeRetry: { readonly maxAttempts: number; readonly backoff: Backoff };
  readonly #batchSize: number;
  #queue: Pending[] = [];
  /** Whether entries are signed: known once the key is derived (entries queued before are serialised, then parsed
   * again when they are signed). */
  #signing = false;
  /** Entries in `#queue`. */
  #queuedEntries = 0;
  readonly #chainEnds = new LRUCache<string, ChainEnd>({ max: CHAIN_CACHE_SIZE });
  /** Sequences this instance knows were never written (dropped or dead-lettered), per conversation. */
  readonly #lost = new LRUCache<string, Set<number>>({ max: CHAIN_CACHE_SIZE });
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #started = false;
  #timerDue = 0;
  #closed = false;
  readonly #dropped: Counter;
  readonly #deadLettered: Counter;
  readonly #written: Counter;

  constructor(options: AuditLedgerOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#clock = options.clock ?? Date.now;
    this.#writeRetry = options.writeRetry ?? {
      maxAttempts: 4,
      backoff: { initialDelayMs: 250, multiplier: 4, maxDelayMs: 4000 },
    };
    this.#batchSize = options.batchSize ?? 1000;
    const masterKey = options.masterKey;
    this.#key =
      masterKey === undefined || masterKey === ''
        ? Promise.resolve(undefined)
        : deriveAuditKey(masterKey, options.kdfIterations);
    this.#key.then((key) => (this.#signing = key !== undefined)).catch(() => undefined);
    if (masterKey === undefined || masterKey === '') {
      options.log?.warn({}, 'audit ledger entries are stored unsigned: set svc.vault.master-key to sign them');
    }
    const registers = [options.registry];
    this.#dropped = new Counter({
      name: 'svc_audit_entries_dropped_total',
      help: 'Audit entries dropped because the audit queue was full',
      registers,
    });
    this.#deadLettered = new Counter({
      name: 'svc_audit_entries_dead_lettered_total',
      help: 'Audit entries written to the dead-letter file after failed store writes',
      registers,
    });
    this.#written = new Counter({
      name: 'svc_audit_entries_written_total',
      help: 'Audit entries written to the store',
      registers,
    });
    const queue = () => this.#queuedEntries;
    new Gauge({
      name: 'svc_audit_queue_size',
      help: 'Audit entries waiting to be written',
      registers,
      collect() {
        this.set(queue());
      },
    });
  }

  get signingEnabled(): Promise<boolean> {
    return this.#key.then((key) => key !== undefined);
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.#queuedEntries;
  }

  /** From now on, queued entries are written soon after they arrive (until then, only `flush` writes them). */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    if (this.#queue.length > 0) this.#flushIn(FLUSH_DELAY_MS);
  }

  /** Stops the automatic flushes and writes everything queued (waiting for no other instance). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush(true);
  }

  /** Flushes after `delayMs`, unless a flush is already due sooner. */
  #flushIn(delayMs: number): void {
    if (!this.#started || this.#closed) return;
    const due = this.#clock() + delayMs;
    if (this.#timer !== undefined && this.#timerDue <= due) return;
    clearTimeout(this.#timer);
    this.#timerDue = due;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((error: unknown) => this.#options.log?.error({ err: error }, 'audit flush failed'));
    }, delayMs);
    this.#timer.unref();
  }

  // --- recording --------------------------------------------------------------------------------------------------

  recordTurn(): TurnAudit {
    const observed: Array<{
      readonly observation: TaskObservation;
      readonly finishedAt: number;
      readonly actions: readonly string[];
    }> = [];
    return {
      observer: (observation, turn) => {
        observed.push({ observation, finishedAt: this.#clock(), actions: turn.actions });
      },
      finish: (turn, lastSequence) => {
        if (observed.length === 0) return [];
        const input = turnInput(turn);
        return observed.map((task, i) => draftOf(turn, task, lastSequence + i + 1, input));
      },
    };
  }

  /** Queues a block of entries; those beyond the queue's bound are dropped (counted). */
  enqueue(drafts: readonly AuditDraft[]): void {
    const room = Math.max(0, this.#options.maxQueueSize - this.#queuedEntries);
    const kept = drafts.length > room ? drafts.slice(0, room) : drafts;
    if (kept.length < drafts.length) {
      this.#dropped.inc(drafts.length - kept.length);
      for (const draft of drafts.slice(kept.length)) this.#markLost(draft.conversationId, draft.sequence);
    }
    if (kept.length === 0) return;
    this.#queue.push(pendingOf(kept, this.#signing));
    this.#queuedEntries += kept.length;
    this.#flushIn(FLUSH_DELAY_MS);
  }

  /**
   * Records an event of the service itself on the chain `chain` (read as `/auditstore/<chain>`; a name no conversation
   * id can take, e.g. `retention`): numbered after the chain's stored end and written at once, so whichever instance
   * records the next one continues the chain. One writer per chain at a time (the retention sweep runs on one
   * instance at a time). The entry holds no user, agent or conversation: the caller passes counts and settings.
   */
  async recordServiceEvent(chain: string, event: ServiceEvent): Promise<void> {
    const latest = await this.#latestEntry(chain);
    const now = this.#clock();
    this.enqueue([
      {
        id: newId(now),
        conversationId: chain,
        agentId: '',
        agentVersion: 0,
        userId: '',
        environment: '',
        stepIndex: 0,
        workflowId: '',
        taskId: chain,
        taskType: event.type,
        taskIndex: 0,
        durationMs: event.durationMs,
        actions: [],
        input: event.input,
        output: event.output,
        llmDetail: null,
        outcome: event.outcome,
        error: event.error,
        timestamp: new Date(now).toISOString(),
        sequence: (latest?.sequence ?? 0) + 1,
      },
    ]);
    await this.flush();
  }

  // --- writing ----------------------------------------------------------------------------------------------------

  /**
   * Writes what is queued now. `final` (shutdown) signs everything, also entries whose predecessor another
   * instance has not written yet. Flushes run one at a time.
   */
  flush(final = false): Promise<void> {
    const run = this.#flushing.then(() => this.#drain(final));
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async #drain(final: boolean): Promise<void> {
    const taken = this.#queue;
    this.#queue = [];
    this.#queuedEntries = 0;
    const deferred: Pending[] = [];
    for (const batch of batchesOf(taken, this.#batchSize)) {
      try {
        deferred.push(...(await this.#writeBatch(batch, final)));
      } catch (error) {
        // Not a store failure (those are retried and dead-lettered inside): keep the entries anyway, unsigned.
        await this.#deadLetter(
          batch.map((pending) => storable(undefined, pending, null)),
          error,
        );
      }
    }
    if (deferred.length > 0) {
      this.#queue = [...deferred, ...this.#queue];
      for (const pending of deferred) this.#queuedEntries += pending.head.entryCount;
      this.#flushIn(DEFERRED_RETRY_MS);
    }
  }

  /** Signs and writes one batch; returns the blocks held back for their predecessor. */
  async #writeBatch(batch: readonly Pending[], final: boolean): Promise<Pending[]> {
    const key = await this.#key;
    const byConversation = new Map<string, Pending[]>();
    for (const pending of batch) {
      const list = byConversation.get(pending.head.conversationId);
      if (list) list.push(pending);
      else byConversation.set(pending.head.conversationId, [pending]);
    }
    const signed: StorableBlock[] = [];
    const deferred: Pending[] = [];
    const now = this.#clock();
    let sliceEnd = performance.now() + SIGNING_SLICE_MS;
    for (const [conversationId, pendings] of byConversation) {
      if (performance.now() > sliceEnd) {
        await nextLoopTurn();
        sliceEnd = performance.now() + SIGNING_SLICE_MS;
      }
      if (!key) {
        for (const pending of pendings) signed.push(storable(undefined, pending, null));
        continue;
      }
      let end = await this.#chainEnd(conversationId, pendings[0]!.head.firstSequence);
      for (const [index, pending] of pendings.entries()) {
        const predecessor = pending.head.firstSequence - 1;
        const waiting = (end?.sequence ?? 0) < predecessor && !this.#isLost(conversationId, predecessor);
        if (waiting && !final && now - (pending.deferredSince ?? now) < MAX_DEFERRAL_MS) {
          for (const later of pendings.slice(index))
            deferred.push({ ...later, deferredSince: later.deferredSince ?? now });
          break;
        }
        const block = storable(key, pending, end?.hmac ?? null);
        signed.push(block);
        end = { sequence: lastSequenceOf(block.head), hmac: block.hmac };
      }
    }
    if (signed.length > 0) await this.#write(signed);
    return deferred;
  }

  /** Where the conversation's chain ends: remembered, or read from the store when another writer may have moved it. */
  async #chainEnd(conversationId: string, nextSequence: number): Promise<ChainEnd | undefined> {
    const remembered = this.#chainEnds.get(conversationId);
    if (remembered && (remembered.sequence >= nextSequence - 1 || this.#isLost(conversationId, nextSequence - 1)))
      return remembered;
    const entry = await this.#latestEntry(conversationId).catch(() => undefined);
    if (entry === undefined || typeof entry.sequence !== 'number') return remembered;
    return { sequence: entry.sequence, hmac: entry.hmac ?? null };
  }

  /** The conversation's stored entry with the highest sequence. */
  async #latestEntry(conversationId: string): Promise<AuditEntry | undefined> {
    const document = await this.#store.latest(conversationId);
    return document === undefined ? undefined : (entriesOfBlock(document).at(-1) as AuditEntry);
  }

  async #write(blocks: StorableBlock[]): Promise<void> {
    const rows: AuditBlock[] = blocks.map(({ head, document }) => ({ ...head, document }));
    try {
      await retrying(() => this.#store.append(rows), { ...this.#writeRetry, retryError: () => ({}) });
    } catch (error) {
      await this.#deadLetter(blocks, error);
      return;
    }
    let entries = 0;
    for (const { head } of blocks) entries += head.entryCount;
    this.#written.inc(entries);
    // Blocks come grouped by conversation, in sequence: the last of each group is where its chain now ends.
    for (const [index, block] of blocks.entries())
      if (blocks[index + 1]?.head.conversationId !== block.head.conversationId) this.#advance(block);
  }

  /** Writes the blocks' entries to the dead-letter file, one JSON entry a line. */
  async #deadLetter(blocks: readonly StorableBlock[], cause: unknown): Promise<void> {
    const path = this.#options.deadLetterPath;
    let entries = 0;
    for (const { head } of blocks) {
      entries += head.entryCount;
      for (let sequence = head.firstSequence; sequence <= lastSequenceOf(head); sequence++)
        this.#markLost(head.conversationId, sequence);
    }
    try {
      const lines = blocks.flatMap(({ document }) =>
        entriesOfBlock(document).map((entry) => `${JSON.stringify(entry)}\n`),
      );
      await mkdir(dirname(path), { recursive: true });
      await appendFile(path, lines.join(''), { encoding: 'utf8', mode: 0o600 });
      this.#deadLettered.inc(entries);
      this.#options.log?.error(
        { err: cause, entries, path },
        'audit entries could not be stored after retries; written to the dead-letter file',
      );
    } catch (error) {
      this.#dropped.inc(entries);
      this.#options.log?.error(
        { err: error, cause, entries, path },
        'audit entries could not be stored nor dead-lettered; dropped',
      );
    }
  }

  #advance(block: StorableBlock): void {
    const { conversationId } = block.head;
    const sequence = lastSequenceOf(block.head);
    const current = this.#chainEnds.get(conversationId);
    this.#chainEnds.set(
      conversationId,
      current && current.sequence > sequence ? current : { sequence, hmac: block.hmac },
    );
    const lost = this.#lost.get(conversationId);
    if (lost) {
      for (const number of lost) if (number < sequence) lost.delete(number);
      if (lost.size === 0) this.#lost.delete(conversationId);
    }
  }

  #markLost(conversationId: string, sequence: number): void {
    let lost = this.#lost.get(conversationId);
    if (!lost) {
      lost = new Set();
      this.#lost.set(conversationId, lost);
    }
    lost.add(sequence);
  }

  #isLost(conversationId: string, sequence: number): boolean {
    return this.#lost.get(conversationId)?.has(sequence) ?? false;
  }

  // --- reading ----------------------------------------------------------------------------------------------------

  async list(conversationId: string, skip: number, limit: number): Promise<AuditEntry[]> {
    const { documents, skipInFirst } = await this.#store.blocks(conversationId, skip, limit);
    return documents.flatMap(entriesOfBlock).slice(skipInFirst, skipInFirst + limit) as AuditEntry[];
  }

  count(conversationId: string): Promise<number> {
    return this.#store.count(conversationId);
  }

  /**
   * Checks every stored entry of the conversation in sequence order: its signature, its link to the entry before
   * it, and the numbering (gaps, duplicates). A gap the chain bridges was never written (undelivered); a gap
   * it does not bridge, a broken signature or link, or a duplicate number means the stored ledger was changed.
   */
  async verify(conversationId: string): Promise<AuditVerification> {
    const key = await this.#key;
    // Every block, whatever entry counts they claim: a block changed behind the service may hold fewer or more.
    const { documents } = await this.#store.blocks(conversationId, 0, Number.MAX_SAFE_INTEGER);
    const stored = documents.flatMap(entriesOfBlock);
    const problems: AuditVerification['problems'] = [];
    const missing: number[] = [];
    const undelivered: number[] = [];
    const duplicates: number[] = [];
    let valid = 0;
    let invalid = 0;
    let unsigned = 0;
    let previous: AuditEntry | undefined;
    for (const item of stored) {
      const entry = item as AuditEntry;
      if (
        typeof entry !== 'object' ||
        entry === null ||
        typeof entry.sequence !== 'number' ||
        typeof entry.id !== 'string'
      ) {
        invalid++;
        problems.push({ entryId: '', sequence: -1, status: 'unreadable' });
        continue;
      }
      const previousSequence = previous?.sequence ?? 0;
      if (previous && entry.sequence === previous.sequence) {
        if (duplicates.at(-1) !== entry.sequence) duplicates.push(entry.sequence);
        problems.push({ entryId: entry.id, sequence: entry.sequence, status: 'duplicate' });
      }
      let linked = false;
      if (!key) {
        // Nothing to check the content against; only the numbering speaks.
      } else if (entry.hmac === null || entry.hmac === undefined) {
        unsigned++;
        problems.push({ entryId: entry.id, sequence: entry.sequence, status: 'unsigned' });
      } else if (!hasValidSignature(key, entry)) {
        invalid++;
        problems.push({ entryId: entry.id, sequence: entry.sequence, status: 'tampered' });
      } else if ((entry.previousHmac ?? null) !== (previous?.hmac ?? null)) {
        invalid++;
        problems.push({ entryId: entry.id, sequence: entry.sequence, status: 'chain-broken' });
      } else {
        valid++;
        linked = true;
      }
      for (let gap = previousSequence + 1; gap < entry.sequence; gap++) (linked ? undelivered : missing).push(gap);
      previous = entry;
    }
    const tamperingSuspected = invalid > 0 || missing.length > 0 || duplicates.length > 0;
    return {
      conversationId,
      signingEnabled: key !== undefined,
      entriesChecked: stored.length,
      valid,
      invalid,
      unsigned,
      missingSequences: missing,
      undeliveredSequences: undelivered,
      duplicateSequences: duplicates,
      intact: key !== undefined && !tamperingSuspected && unsigned === 0 && undelivered.length === 0,
      tamperingSuspected,
      problems,
      verifiedAt: new Date(this.#clock()).toISOString(),
    };
  }
}

// --- building entries ---------------------------------------------------------------------------------------------

interface TurnInput {
  readonly userInput: unknown;
  readonly context: string[];
}

/** The user input as the step's output finally holds it (normalised by the parser, secrets scrubbed). */
function turnInput(turn: Turn): TurnInput {
  const shown = turn.output.input;
  return { userInput: shown === undefined ? null : summarize(shown), context: Object.keys(turn.context) };
}

function draftOf(
  turn: Turn,
  {
    observation,
    finishedAt,
    actions,
  }: { observation: TaskObservation; finishedAt: number; actions: readonly string[] },
  sequence: number,
  input: TurnInput,
): AuditDraft {
  const output: Record<string, unknown> = {};
  let llmDetail: Record<string, unknown> | null = null;
  for (const key of observation.writtenKeys) {
    const value = turn.has(key) ? summarize(turn.get(key)) : '<removed>';
    if (key.startsWith('audit:')) (llmDetail ??= {})[key.slice('audit:'.length)] = value;
    else output[key] = value;
  }
  return {
    id: newId(finishedAt),
    conversationId: turn.conversationId,
    agentId: turn.agentId,
    agentVersion: turn.agentVersion,
    userId: turn.userId,
    environment: turn.environment,
    stepIndex: turn.stepIndex,
    workflowId: observation.workflowId,
    taskId: `${observation.workflowId}:${observation.workflowTaskIndex}`,
    taskType: observation.taskType,
    taskIndex: observation.taskIndex,
    durationMs: observation.durationMs,
    actions,
    input: { ...input, actions: observation.actionsBefore },
    output,
    llmDetail,
    outcome: observation.error === undefined ? 'ok' : 'error',
    error: observation.error === undefined ? null : errorText(observation.error),
    timestamp: new Date(finishedAt).toISOString(),
    sequence,
  };
}
