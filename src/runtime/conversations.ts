import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import { AppError, conflict, notFound } from '../errors.ts';
import { anonymousUserId, isId, randomId } from '../ids.ts';
import type { AuthorizeResource, CallerAccess } from '../security/access.ts';
import type { CallerIdentity } from '../security/auth-caller.ts';
import type { ClusterCoordination } from '../storage/cluster-ports.ts';
import type {
  ConversationQuery,
  ConversationRow,
  ConversationStateName,
  ConversationStore,
  StoredStepText,
  UserPropertyStore,
} from '../storage/runtime-ports.ts';
import type { CompiledAgent } from './compiler.ts';
import { CompactStep } from './compact-step.ts';
import { contextValues } from './context.ts';
import { Coordinator } from './coordinator.ts';
import { EarlierSteps } from './earlier-steps.ts';
import type { ConversationMeters, TaskMeters } from '../ops/domain-metrics.ts';
import type { Tracing } from '../ops/tracing.ts';
import type { DeploymentService, Environment } from './deployments.ts';
import {
  applyTallies,
  canRedo,
  canUndo,
  emptyTallies,
  RESERVED_ACTIONS,
  type ContextValue,
  type Conversation,
  type KeyedRequest,
  type Property,
  type StoredStep,
  type Tallies,
} from './memory.ts';
import {
  applyDecision,
  checkDecision,
  decisionAuditDraft,
  pendingApprovalOf,
  type Decision,
  type PendingApproval,
  type PendingTurn,
  type QueuedMessage,
} from './human-approval.ts';
import { runPipeline } from './pipeline.ts';
import type { AuditDraft, AuditSink } from '../ops/audit.ts';
import type { TurnReplay } from './replay.ts';
import { Turn, type TurnEvent } from './turn.ts';

export interface Message {
  readonly input: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  /** A live listener of the turn's progress (server-sent events). */
  readonly onEvent?: ((event: TurnEvent) => void) | undefined;
  /** The authenticated user who sent it: `${caller:token}` / `${caller:userId}` of HTTP calls (never stored). */
  readonly caller?: CallerIdentity | undefined;
  /**
   * The client's name for this request (`Idempotency-Key`), stored with the step it makes: a retry with the same
   * key and message is answered from that step instead of running the turn again.
   */
  readonly idempotencyKey?: string | undefined;
  /** Answers the turn's external calls from recordings (transcript replays). */
  readonly replay?: TurnReplay | undefined;
  /** The group discussion the message belongs to (group-visible user memory); only the group service sets it. */
  readonly groupId?: string | undefined;
}

export interface ConversationServiceOptions {
  readonly store: ConversationStore;
  /** Cluster-wide lock per conversation and whether other instances share the store. */
  readonly cluster: ClusterCoordination;
  readonly userProperties: UserPropertyStore;
  readonly deployments: DeploymentService;
  /** Checks a caller's level on the agent a conversation starts with. */
  readonly authorize: AuthorizeResource;
  readonly log: FastifyBaseLogger;
  readonly turnTimeoutMs: number;
  /** How long a turn's claim on its conversation outlives the turn timeout (the wait before another instance takes over). */
  readonly claimMarginMs: number;
  readonly redoCacheSize: number;
  /** How many of a conversation's last steps a retried message (same `Idempotency-Key`) is looked up in. */
  readonly retryWindowSteps: number;
  readonly maxActiveConversations: number;
  /** Conversations kept in memory (least recently used beyond it are reloaded from the store when needed). */
  readonly cacheSize?: number;
  /** Megabytes of step text the cached conversations hold at most (least recently used out first). */
  readonly cacheMegabytes?: number;
  readonly clock?: () => number;
  /** The audit ledger: one entry per executed task per turn. */
  readonly audit?: AuditSink | undefined;
  /** Told whenever a turn starts or stops waiting for a person (the inbox's live updates). */
  readonly onApprovalsChanged?: ((conversationId: string) => void) | undefined;
  /** Turn, conversation and coordinator meters; the gauges read this service when scraped. */
  readonly meters?: ConversationMeters | undefined;
  /** Task durations by task type. */
  readonly taskMeters?: TaskMeters | undefined;
  /** A span per turn and per task when traces are on. */
  readonly tracing?: Tracing | undefined;
}

/** A conversation as the runtime holds it: the immutable view plus the mutable bits only this module touches. */
interface LiveConversation extends Conversation {
  state: ConversationStateName;
  lastModifiedOn: number;
  revision: number;
  readonly steps: StoredStep[];
  redo: StoredStep[];
  properties: Record<string, Property>;
  tallies: Tallies;
  truncations: TruncationLog;
  /** Reads the steps whose text the cached conversation does not hold (stores that read without waiting). */
  readonly earlier: EarlierSteps | undefined;
  /** Audit entries numbered so far (assigned under the conversation lock, stored with the conversation). */
  auditSequence: number;
  /** Audit entries of turns not committed yet; they reach the ledger only once their turn is committed. */
  unqueuedAudit: AuditDraft[];
  /** The turn waiting for a person (state AWAITING_HUMAN). */
  pending: PendingTurn | undefined;
  /** Messages that arrived while a turn waited; they run, in order, once it is done. */
  queued: QueuedMessage[];
}

/**
 * Where undo removed stored steps, by revision. Steps are otherwise only appended, so an instance whose cached
 * copy is at revision r reloads just the steps from the lowest index changed since r (usually only new ones).
 * The log keeps the last entries; it is complete for the revisions after `completeFrom`.
 */
interface TruncationLog {
  readonly completeFrom: number;
  readonly entries: ReadonlyArray<{ readonly revision: number; readonly fromIndex: number }>;
}

const TRUNCATION_LOG_SIZE = 32;
const emptyTruncationLog: TruncationLog = { completeFrom: 0, entries: [] };

function logTruncation(log: TruncationLog, revision: number, fromIndex: number): TruncationLog {
  const entries = [...log.entries, { revision, fromIndex }];
  if (entries.length <= TRUNCATION_LOG_SIZE) return { completeFrom: log.completeFrom, entries };
  const dropped = entries.shift()!;
  return { completeFrom: dropped.revision, entries };
}

/** What the store keeps beside the steps. */
interface StoredState {
  readonly properties: Record<string, Property>;
  readonly redo: StoredStep[];
  readonly tallies: Tallies;
  readonly truncations?: TruncationLog;
  readonly auditSequence?: number;
  readonly pending?: PendingTurn;
  readonly queued?: QueuedMessage[];
}

const CONVERSATION_REFERENCE = 'svc://ai.svc.conversation/conversationstore/conversations/';

export function conversationReference(id: string): string {
  return CONVERSATION_REFERENCE + id;
}

/**
 * Conversations: start, messages, undo/redo, end, reads. Turns of one conversation run one at a time through the
 * coordinator; every acknowledged turn is committed to the store before its answer is sent. Live conversations are
 * cached in memory, so a turn costs the same at step 1000 as at step 10.
 *
 * Operations take the caller (`request.caller`, absent for internal use). While access checks apply to it, it
 * starts conversations only with agents it may USE and only as itself, and it reads, continues, lists and deletes
 * only its own conversations (another user's conversation is a 404, as if it did not exist; ids are random).
 */
const DAY_MILLIS = 24 * 60 * 60 * 1000;
/** A conversation counts as active (`svc_conversations_active`) this long after its last turn. */
const ACTIVE_WINDOW_MILLIS = 5 * 60 * 1000;
/** Conversations started and not continued that the active count keeps track of (beyond: the oldest are not counted). */
const UNCACHED_STARTS_KEPT = 10_000;

export class ConversationService {
  readonly #options: ConversationServiceOptions;
  readonly #store: ConversationStore;
  readonly #clock: () => number;
  readonly #coordinator: Coordinator;
  readonly #cache: LRUCache<string, LiveConversation>;
  /** Steps whose text a cached conversation holds (`EarlierSteps`): the steps a retried message is looked up in. */
  readonly #heldSteps: number;
  /** Conversations started here and not cached yet (not continued since), with their start time, oldest first. */
  readonly #uncachedStarts = new Map<string, number>();

  constructor(options: ConversationServiceOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#clock = options.clock ?? Date.now;
    const meters = options.meters;
    this.#coordinator = new Coordinator(
      options.maxActiveConversations,
      meters && ((seconds) => meters.coordinatorWaited(seconds)),
    );
    const heldSteps = options.retryWindowSteps + 1;
    this.#heldSteps = heldSteps;
    this.#cache = new LRUCache({
      max: options.cacheSize ?? 10_000,
      maxSize: (options.cacheMegabytes ?? 256) * 2 ** 20,
      sizeCalculation: (conversation) => cachedSize(conversation, heldSteps),
    });
    meters?.observe({
      activeConversations: () => this.#recentlyActive(),
      coordinator: () => ({
        conversations: this.#coordinator.activeConversations,
        queued: this.#coordinator.queuedWork,
      }),
    });
  }

  /** Conversations held here that are not ended and had a turn within the active window. */
  #recentlyActive(): number {
    const since = this.#clock() - ACTIVE_WINDOW_MILLIS;
    let active = 0;
    for (const conversation of this.#cache.values())
      if (conversation.lastModifiedOn >= since && conversation.state !== 'ENDED') active++;
    for (const [id, startedOn] of this.#uncachedStarts) {
      if (startedOn >= since) active++;
      else this.#uncachedStarts.delete(id);
    }
    return active;
  }

  get activeConversations(): number {
    return this.#coordinator.activeConversations;
  }

  /**
   * Starts a conversation with the newest READY version of the agent in the environment: step 0 runs with the
   * action CONVERSATION_START and the start context; a given input then runs as the first message. The user is
   * `userId`, else the start context's `userId`, else the signed-in caller, else an anonymous id.
   */
  async start(
    agentId: string,
    environment: Environment,
    options: {
      userId?: string | undefined;
      input?: string | undefined;
      context: Readonly<Record<string, ContextValue>>;
      caller?: CallerIdentity | undefined;
      /** Runs this version (compiled when needed) instead of the newest READY one in the environment. */
      agentVersion?: number | undefined;
      /** Answers the start step's external calls from recordings (transcript replays). */
      replay?: TurnReplay | undefined;
    },
    caller?: CallerAccess,
  ): Promise<Conversation> {
    await this.#options.authorize(agentId, caller, 'USE');
    const userContext = options.context.userId;
    const contextUserId =
      userContext?.type === 'string' && typeof userContext.value === 'string' ? userContext.value : undefined;
    caller?.requireSelf(options.userId);
    caller?.requireSelf(contextUserId);
    const deployed =
      options.agentVersion === undefined
        ? this.#options.deployments.latestReady(environment, agentId)
        : {
            version: options.agentVersion,
            agent: this.#options.deployments.compiled(agentId, options.agentVersion),
          };
    if (!deployed) {
      throw notFound(
        `Agent ${agentId} is not deployed (or not ready) in the ${environment} environment; deploy it first.`,
      );
    }
    const agent = await deployed.agent;
    const now = this.#clock();
    const knownUserId = options.userId || contextUserId || caller?.principal.name;
    const userId = knownUserId || anonymousUserId(now);
    // An anonymous id made just now has no long-term properties yet: no store read.
    const longTermBefore = knownUserId ? await this.#loadLongTermProperties(userId) : {};
    const conversation: LiveConversation = {
      id: randomId(),
      agentId: agent.agentId, // the deployment's string, not a slice of this request's URL that would keep it alive
      agentVersion: deployed.version,
      userId,
      environment,
      state: 'READY',
      createdOn: now,
      lastModifiedOn: now,
      revision: 0,
      steps: [],
      earlier: undefined,
      redo: [],
      properties: { ...longTermBefore },
      tallies: emptyTallies,
      truncations: emptyTruncationLog,
      auditSequence: 0,
      unqueuedAudit: [],
      pending: undefined,
      queued: [],
    };
    await this.#withTimeout(
      conversation,
      async (signal) => {
        await this.#runTurn(
          conversation,
          agent,
          { input: '', context: options.context, caller: options.caller, replay: options.replay },
          signal,
          true,
        );
        if (options.input === undefined || options.input.trim() === '') return;
        if (conversation.state === 'AWAITING_HUMAN') {
          conversation.queued = [{ input: options.input, context: options.context, receivedAt: this.#clock() }];
        } else if (conversation.state !== 'ENDED') {
          await this.#runTurn(
            conversation,
            agent,
            { input: options.input, context: options.context, caller: options.caller },
            signal,
            false,
          );
        }
      },
      false,
    );
    conversation.revision = 1;
    // Not cached until its next use (`#startedHere`).
    await this.#store.create(toRow(conversation), compactFrom(conversation.steps, 0, false));
    this.#queueAudit(conversation);
    await this.#saveLongTermProperties(conversation, longTermBefore);
    this.#startedHere(conversation);
    this.#options.meters?.conversationStarted(agentId);
    if (conversation.state === 'AWAITING_HUMAN') this.#options.onApprovalsChanged?.(conversation.id);
    return conversation;
  }

  /**
   * Processes one message, after every message queued before it for the same conversation. A message repeating
   * an earlier one by its idempotency key gets that one's answer (see `#answered`); run one at a time, two
   * copies of a message make one step even when they arrive together.
   */
  async say(conversationId: string, message: Message, caller?: CallerAccess): Promise<Conversation> {
    const queued = ownedBy(await this.#load(conversationId), caller);
    const answeredBefore = this.#answered(queued, message);
    if (answeredBefore) return answeredBefore;
    if (queued.state === 'ENDED') throw ended(conversationId);
    const agent = await this.#agentOf(queued);
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      const answered = this.#answered(conversation, message);
      if (answered) return answered;
      if (conversation.state === 'ENDED') throw ended(conversationId);
      if (conversation.state === 'AWAITING_HUMAN') {
        if (this.#queuedBefore(conversation, message)) return conversation;
        const before = snapshotOf(conversation);
        const { input, context, idempotencyKey } = message;
        const request = idempotencyKey === undefined ? {} : { idempotencyKey, fingerprint: fingerprintOf(message) };
        conversation.queued = [...conversation.queued, { input, context, receivedAt: this.#clock(), ...request }];
        await this.#commit(conversation, before, {});
        this.#options.onApprovalsChanged?.(conversationId);
        return conversation;
      }
      await this.#turnAndCommit(conversation, agent, message);
      return conversation;
    });
  }

  /** Runs one message's turn on the loaded conversation and commits it (the caller holds the conversation). */
  async #turnAndCommit(conversation: LiveConversation, agent: CompiledAgent, message: Message): Promise<void> {
    const before = snapshotOf(conversation);
    conversation.redo = [];
    try {
      await this.#withTimeout(
        conversation,
        (signal) => this.#runTurn(conversation, agent, message, signal, false),
        true,
      );
    } catch (error) {
      if (!(error instanceof AppError && error.kind === 'timeout')) restore(conversation, before);
      throw error;
    }
    await this.#commit(conversation, before, { appendsLatestStep: true });
    if (conversation.state === 'AWAITING_HUMAN') this.#options.onApprovalsChanged?.(conversation.id);
    await this.#saveLongTermProperties(conversation, before.properties);
  }

  // --- human in the loop -------------------------------------------------------------------------------------------

  /** The turns waiting for a person, most recently active conversations first (`filter` as for `list`). */
  async pendingApprovals(
    filter: Omit<ConversationQuery, 'state' | 'index' | 'limit'>,
    include: (conversation: Conversation) => Promise<boolean>,
  ): Promise<PendingApproval[]> {
    const page = 1_000;
    const approvals: PendingApproval[] = [];
    for (let index = 0; ; index++) {
      const rows = await this.#store.list({ ...filter, state: 'AWAITING_HUMAN', index, limit: page });
      for (const row of rows) {
        const conversation = await this.#load(row.id).catch(() => undefined);
        if (conversation?.pending && (await include(conversation)))
          approvals.push(pendingApprovalOf(conversation, conversation.pending, conversation.queued.length));
      }
      if (rows.length < page) return approvals;
    }
  }

  /**
   * Flags the waiting turn `approvalId` as escalated (timeout policy `escalate`): it keeps waiting. False when that
   * turn no longer waits or was escalated already.
   */
  async escalate(conversationId: string, approvalId: string): Promise<boolean> {
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      const pending = conversation.pending;
      if (pending?.id !== approvalId || pending.escalatedAt !== undefined) return false;
      const before = snapshotOf(conversation);
      conversation.pending = { ...pending, escalatedAt: this.#clock() };
      await this.#commit(conversation, before, {});
      this.#options.onApprovalsChanged?.(conversationId);
      return true;
    });
  }

  /** The turn waiting in this conversation, if any (`include` decides whether the caller may see it). */
  async pendingApproval(
    conversationId: string,
    include: (conversation: Conversation) => Promise<boolean>,
  ): Promise<PendingApproval | undefined> {
    const conversation = await this.#load(conversationId);
    if (!(await include(conversation))) throw unknownConversation(conversationId);
    return conversation.pending && pendingApprovalOf(conversation, conversation.pending, conversation.queued.length);
  }

  /**
   * A person's decision on the waiting turn: it goes on where it paused (or ends as decided), the decision goes to
   * the audit ledger with who made it, then the messages queued meanwhile run in order. `approvalId`, when given,
   * must name the waiting turn (a decision on a turn already decided is a 409). `replay` answers the resumed turn's
   * external calls from recordings, as it did for the turn before it waited (transcript replays).
   */
  async resume(
    conversationId: string,
    decision: Decision,
    approvalId: string | undefined,
    include: (conversation: Conversation) => Promise<boolean>,
    replay?: TurnReplay,
  ): Promise<Conversation> {
    const visible = await this.#load(conversationId);
    if (!(await include(visible))) throw unknownConversation(conversationId);
    const agent = await this.#agentOf(visible);
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      const pending = conversation.pending;
      if (
        conversation.state !== 'AWAITING_HUMAN' ||
        !pending ||
        (approvalId !== undefined && approvalId !== pending.id)
      )
        throw conflict('This conversation waits for no such decision (it was decided already, or never paused).');
      checkDecision(pending, decision);
      const before = snapshotOf(conversation);
      const waitingStep = conversation.steps.pop()!;
      conversation.tallies = applyTallies(conversation.tallies, waitingStep, -1);
      conversation.pending = undefined;
      try {
        await this.#withTimeout(
          conversation,
          (signal) =>
            this.#runTurn(
              conversation,
              agent,
              { input: pending.input, context: pending.context, replay },
              signal,
              pending.isStart,
              { pending, decision },
            ),
          false,
        );
      } catch (error) {
        // Also past the timeout: the decision was not applied, the turn still waits.
        restore(conversation, before);
        conversation.steps.push(waitingStep);
        latestKeepsParsed(conversation.steps);
        throw error;
      }
      const now = this.#clock();
      conversation.unqueuedAudit.push(
        decisionAuditDraft(conversation, pending, decision, before.stepCount - 1, ++conversation.auditSequence, now),
      );
      await this.#commit(conversation, before, {
        truncateStepsFrom: before.stepCount - 1,
        appendsLatestStep: true,
      });
      await this.#saveLongTermProperties(conversation, before.properties);
      while (
        conversation.queued.length > 0 &&
        conversation.state !== 'AWAITING_HUMAN' &&
        conversation.state !== 'ENDED'
      ) {
        const [next, ...rest] = conversation.queued;
        conversation.queued = rest;
        const { input, context, idempotencyKey } = next!;
        await this.#turnAndCommit(conversation, agent, { input, context, idempotencyKey });
      }
      this.#options.onApprovalsChanged?.(conversationId);
      return conversation;
    });
  }

  async get(conversationId: string, caller?: CallerAccess): Promise<Conversation> {
    return ownedBy(await this.#load(conversationId), caller);
  }

  /**
   * Throws what `say` would throw before running a turn: 404 for an unknown (or another user's), 410 for an ended
   * conversation (unless `message` retries one it answered), 422 for an idempotency key reused for another message.
   */
  async checkOpen(conversationId: string, caller?: CallerAccess, message?: Message): Promise<void> {
    const conversation = await this.get(conversationId, caller);
    if (message !== undefined && this.#answered(conversation, message)) return;
    if (conversation.state === 'ENDED') throw ended(conversationId);
  }

  /**
   * Takes back the last step: it moves to the redo stack (the oldest undone step is dropped when the stack is
   * full) and the conversation-scoped properties return to what they were after the step that is now current.
   */
  async undo(conversationId: string, caller?: CallerAccess): Promise<Conversation> {
    await this.get(conversationId, caller);
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      if (conversation.state === 'AWAITING_HUMAN') throw conflict('The conversation waits for a person; decide first.');
      if (!canUndo(conversation))
        throw conflict('Nothing to undo: the conversation is at its first step or has ended.');
      const before = snapshotOf(conversation);
      const undone = conversation.steps.pop()!;
      if (undone instanceof CompactStep) undone.forgetParsed();
      latestKeepsParsed(conversation.steps);
      conversation.redo = [...conversation.redo, undone].slice(-Math.max(this.#options.redoCacheSize, 0));
      conversation.tallies = applyTallies(conversation.tallies, undone, -1);
      conversation.properties = restoredProperties(conversation.properties, conversation.steps.at(-1)!);
      await this.#commit(conversation, before, { truncateStepsFrom: conversation.steps.length });
      return conversation;
    });
  }

  /** Puts the most recently undone step back. */
  async redo(conversationId: string, caller?: CallerAccess): Promise<Conversation> {
    await this.get(conversationId, caller);
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      if (conversation.state === 'AWAITING_HUMAN') throw conflict('The conversation waits for a person; decide first.');
      if (!canRedo(conversation)) throw conflict('Nothing to redo.');
      const before = snapshotOf(conversation);
      const redone = conversation.redo.at(-1)!;
      conversation.redo = conversation.redo.slice(0, -1);
      conversation.steps.push(redone);
      conversation.tallies = applyTallies(conversation.tallies, redone, 1);
      conversation.properties = restoredProperties(conversation.properties, redone);
      await this.#commit(conversation, before, { appendsLatestStep: true });
      return conversation;
    });
  }

  /** Ends the conversation (idempotent); the redo stack is dropped. */
  async end(conversationId: string, caller?: CallerAccess): Promise<Conversation> {
    await this.get(conversationId, caller);
    return this.#exclusive(conversationId, async () => {
      const conversation = await this.#load(conversationId);
      if (conversation.state === 'ENDED') return conversation;
      const before = snapshotOf(conversation);
      const wasWaiting = conversation.pending !== undefined;
      conversation.state = 'ENDED';
      conversation.redo = [];
      conversation.pending = undefined;
      await this.#commit(conversation, before, {});
      if (wasWaiting) this.#options.onApprovalsChanged?.(conversationId);
      return conversation;
    });
  }

  /** A caller whom checks apply to lists only its own conversations (naming another user is a 403). */
  async list(query: ConversationQuery, caller?: CallerAccess): Promise<ConversationRow[]> {
    if (!caller?.restricted) return this.#store.list(query);
    const { name } = caller.principal;
    if (query.userId !== undefined && query.userId !== name)
      throw new AppError('forbidden', `${name} may only list their own conversations.`);
    return this.#store.list({ ...query, userId: name });
  }

  async delete(conversationId: string, caller?: CallerAccess): Promise<void> {
    checkConversationId(conversationId);
    if (caller?.restricted) await this.get(conversationId, caller);
    if (!(await this.#remove(conversationId))) throw unknownConversation(conversationId);
  }

  /**
   * Removes a conversation from the cache and the store, as its only writer, if `stillWanted` holds for its stored
   * header then (default: always); false when it was unknown or kept.
   */
  #remove(conversationId: string, stillWanted?: (row: ConversationRow) => boolean): Promise<boolean> {
    return this.#exclusive(conversationId, async () => {
      if (stillWanted !== undefined) {
        const row = await this.#store.loadRow(conversationId);
        if (row === undefined || !stillWanted(row)) return false;
      }
      this.#cache.delete(conversationId);
      this.#uncachedStarts.delete(conversationId);
      return this.#store.delete(conversationId);
    });
  }

  /**
   * Retention: deletes the conversation if it is still inactive since before `before` (and ENDED, or not, as
   * `ended` says) once it holds the conversation's lock, so a turn that ran meanwhile keeps it. A conversation with
   * work queued or running on this instance is skipped at once (`busy`) rather than waited for.
   */
  async deleteIfInactive(conversationId: string, ended: boolean, before: number): Promise<'deleted' | 'kept' | 'busy'> {
    if (this.#coordinator.isActive(conversationId)) return 'busy';
    const deleted = await this.#remove(
      conversationId,
      (row) => row.lastModifiedOn < before && (row.state === 'ENDED') === ended,
    );
    return deleted ? 'deleted' : 'kept';
  }

  /**
   * Deletes every conversation matching `filter` last active more than `days` days ago; answers how many. The
   * matching ids are collected first (deleting while paging would shift the pages), then each is deleted as
   * `delete` does; one deleted meanwhile by someone else is not counted. Admins only (the route says so).
   */
  async deleteOlderThan(filter: Omit<ConversationQuery, 'index' | 'limit'>, days: number): Promise<number> {
    const before = this.#clock() - days * DAY_MILLIS;
    return this.#deleteWhere(filter, (row) => row.lastModifiedOn < before);
  }

  /** Deletes every conversation of a user (erasure of the user's data); answers how many. */
  deleteOfUser(userId: string): Promise<number> {
    return this.#deleteWhere({ userId }, () => true);
  }

  async #deleteWhere(
    filter: Omit<ConversationQuery, 'index' | 'limit'>,
    selected: (row: ConversationRow) => boolean,
  ): Promise<number> {
    const page = 1_000;
    const ids: string[] = [];
    for (let index = 0; ; index++) {
      const rows = await this.#store.list({ ...filter, index, limit: page });
      for (const row of rows) if (selected(row)) ids.push(row.id);
      if (rows.length < page) break;
    }
    let deleted = 0;
    for (const id of ids) if (await this.#remove(id)) deleted++;
    return deleted;
  }

  /**
   * Runs `work` as the only writer of the conversation: in this process after everything queued before it, and
   * across instances under the store's lock. The claim outlives the turn timeout by a margin.
   */
  #exclusive<T>(conversationId: string, work: () => Promise<T>): Promise<T> {
    const claimMillis = this.#options.turnTimeoutMs + this.#options.claimMarginMs;
    return this.#coordinator.run(conversationId, () =>
      this.#options.cluster.withConversationLock(conversationId, claimMillis, work),
    );
  }

  /**
   * The answer a message already got, when it retries one: a step among the last `retryWindowSteps` made by a
   * request with the same idempotency key. The answer is the conversation as that turn left it. The same key with
   * a different message is refused (422), so a client bug cannot silently drop a message.
   */
  #answered(conversation: Conversation, message: Message): Conversation | undefined {
    const key = message.idempotencyKey;
    if (key === undefined) return undefined;
    const { steps } = conversation;
    const oldest = Math.max(0, steps.length - this.#options.retryWindowSteps);
    for (let index = steps.length - 1; index >= oldest; index--) {
      const request = steps[index]!.request;
      if (request?.idempotencyKey !== key) continue;
      if (request.fingerprint !== fingerprintOf(message)) {
        throw keyReused();
      }
      return {
        ...conversation,
        steps: steps.slice(0, index + 1),
        redo: [],
        properties: steps[index]!.properties,
        state: request.state,
      };
    }
    return undefined;
  }

  /**
   * Whether a message retried while the conversation waits was queued already (same idempotency key and message);
   * the same key with another message is refused (422), as for answered messages.
   */
  #queuedBefore(conversation: LiveConversation, message: Message): boolean {
    const key = message.idempotencyKey;
    const queued = key === undefined ? undefined : conversation.queued.find((entry) => entry.idempotencyKey === key);
    if (queued === undefined) return false;
    if (queued.fingerprint !== fingerprintOf(message)) {
      throw keyReused();
    }
    return true;
  }

  // --- turns ---------------------------------------------------------------------------------------------------

  #runTurn(
    conversation: LiveConversation,
    agent: CompiledAgent,
    message: Message,
    signal: AbortSignal,
    isStart: boolean,
    resumed?: { pending: PendingTurn; decision: Decision },
  ): Promise<void> {
    latestKeepsParsed(conversation.steps); // the turn reads the step before it several times
    const tracing = this.#options.tracing;
    if (tracing === undefined) return this.#turn(conversation, agent, message, signal, isStart, resumed);
    const attributes = {
      'svc.agent.id': conversation.agentId,
      'svc.agent.version': conversation.agentVersion,
      'svc.conversation.id': conversation.id,
      'svc.turn.step': conversation.steps.length,
    };
    return tracing.inSpan('turn', attributes, async (span) => {
      await this.#turn(conversation, agent, message, signal, isStart, resumed);
      span.setAttribute('svc.turn.outcome', conversation.state);
    });
  }

  async #turn(
    conversation: LiveConversation,
    agent: CompiledAgent,
    message: Message,
    signal: AbortSignal,
    isStart: boolean,
    resumed?: { pending: PendingTurn; decision: Decision },
  ): Promise<void> {
    const startedAt = performance.now();
    // Readers see IN_PROGRESS while the turn runs; the stored state changes only with the committed result.
    conversation.state = 'IN_PROGRESS';
    const turn = new Turn({
      conversation,
      input: message.input,
      context: message.context,
      signal,
      clock: this.#clock,
      onEvent: message.onEvent,
      caller: message.caller,
      replay: message.replay,
      groupId: message.groupId,
      resumeFrom: resumed?.pending.step,
    });
    if (!resumed) {
      if (isStart) turn.setActions([RESERVED_ACTIONS.start]);
      if (message.input.trim() !== '') turn.setOutput('input', message.input);
      if (Object.keys(message.context).length > 0) turn.setOutput('context', contextValues(message.context));
      // A `lang` context sets the conversation language (parser dictionaries, output sets) for this user from now on.
      const language = message.context.lang;
      if (language?.type === 'string' && typeof language.value === 'string')
        turn.setProperty({ name: 'lang', value: language.value, scope: 'longTerm' });
    }
    let outcome: 'completed' | 'stopped' | 'failed' | 'paused';
    let pause: { resumeAt: number; task: string } | undefined;
    const audit = this.#options.audit?.recordTurn();
    try {
      const goesOn = resumed ? applyDecision(turn, resumed.pending, resumed.decision, this.#clock()) : true;
      const result = goesOn
        ? await runPipeline(
            agent,
            turn,
            audit?.observer,
            resumed?.pending.resumeAt,
            this.#options.taskMeters,
            this.#options.tracing,
          )
        : { kind: 'completed' as const };
      outcome = result.kind;
      if (result.kind === 'paused') pause = result;
    } catch (error) {
      if (signal.aborted) throw error;
      outcome = 'failed';
      this.#options.log.warn(
        {
          err: error,
          conversationId: conversation.id,
          agentId: conversation.agentId,
          agentVersion: conversation.agentVersion,
        },
        'a task failed; the turn ends in ERROR',
      );
    }
    if (signal.aborted) throw signal.reason;
    const waitingStep = pause && turn.partialStep();
    const { step, properties } = turn.finish();
    if (audit) {
      const entries = audit.finish(turn, conversation.auditSequence);
      conversation.unqueuedAudit.push(...entries);
      conversation.auditSequence += entries.length;
    }
    const state =
      outcome === 'failed'
        ? 'ERROR'
        : outcome === 'paused'
          ? 'AWAITING_HUMAN'
          : outcome === 'stopped' || turn.actions.includes(RESERVED_ACTIONS.end)
            ? 'ENDED'
            : 'READY';
    conversation.pending =
      pause && waitingStep
        ? {
            id: randomId(),
            kind: turn.toolApprovalRequest ? 'tool-approval' : 'pause',
            task: pause.task,
            resumeAt: pause.resumeAt,
            pausedAt: this.#clock(),
            step: waitingStep,
            input: message.input,
            context: message.context,
            isStart,
            toolCalls: turn.toolApprovalRequest?.toolCalls ?? [],
            ...(turn.toolApprovalRequest ? { taskState: turn.toolApprovalRequest.state } : {}),
          }
        : undefined;
    const request: KeyedRequest | undefined =
      message.idempotencyKey === undefined
        ? undefined
        : { idempotencyKey: message.idempotencyKey, fingerprint: fingerprintOf(message), state };
    conversation.steps.push(request ? { ...step, request } : step);
    conversation.tallies = applyTallies(conversation.tallies, step, 1);
    conversation.properties = properties;
    conversation.lastModifiedOn = this.#clock();
    conversation.state = state;
    this.#options.meters?.turnFinished(conversation.agentId, state, (performance.now() - startedAt) / 1000);
  }

  /**
   * Runs `work` within the turn timeout. Past it the caller gets 408; with `persistInterruption` the stored
   * conversation is marked EXECUTION_INTERRUPTED (the unfinished step is dropped).
   */
  async #withTimeout(
    conversation: LiveConversation,
    work: (signal: AbortSignal) => Promise<void>,
    persistInterruption: boolean,
  ): Promise<void> {
    const controller = new AbortController();
    let timeout: AppError | undefined;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timeout = new AppError(
          'timeout',
          `The turn took longer than ${this.#options.turnTimeoutMs / 1000} s and was interrupted; the message was not processed.`,
        );
        controller.abort(timeout);
        reject(timeout);
      }, this.#options.turnTimeoutMs);
    });
    const before = persistInterruption ? snapshotOf(conversation) : undefined;
    const startedAt = performance.now();
    const running = work(controller.signal);
    running.catch(() => undefined); // after a timeout the abandoned work ends on its own; its failure is moot
    try {
      await Promise.race([running, expired]);
    } catch (error) {
      if (timeout === undefined || error !== timeout) throw error;
      this.#options.meters?.turnFinished(conversation.agentId, 'TIMEOUT', (performance.now() - startedAt) / 1000);
      if (before) {
        restore(conversation, before);
        conversation.state = 'EXECUTION_INTERRUPTED';
        conversation.lastModifiedOn = this.#clock();
        await this.#commit(conversation, before, {});
      }
      throw timeout;
    } finally {
      clearTimeout(timer);
    }
  }

  async #agentOf(conversation: Conversation): Promise<CompiledAgent> {
    try {
      return await this.#options.deployments.compiled(conversation.agentId, conversation.agentVersion);
    } catch {
      throw notFound(
        `Agent ${conversation.agentId} version ${conversation.agentVersion} of this conversation cannot be run any more (it was deleted or no longer compiles).`,
      );
    }
  }

  // --- persistence -----------------------------------------------------------------------------------------------

  async #commit(
    conversation: LiveConversation,
    before: Snapshot,
    change: { truncateStepsFrom?: number; appendsLatestStep?: boolean },
  ): Promise<void> {
    const expected = conversation.revision;
    conversation.revision = expected + 1;
    if (change.truncateStepsFrom !== undefined) {
      conversation.truncations = logTruncation(
        conversation.truncations,
        conversation.revision,
        change.truncateStepsFrom,
      );
    }
    let outcome: Awaited<ReturnType<ConversationStore['commit']>>;
    try {
      outcome = await this.#store.commit(conversation.id, expected, {
        row: toRow(conversation),
        truncateStepsFrom: change.truncateStepsFrom,
        appendSteps: change.appendsLatestStep ? compactFrom(conversation.steps, conversation.steps.length - 1) : [],
      });
    } catch (error) {
      // Whatever failed (serialising the change, the store), the cache keeps only committed state: the next
      // request reads the conversation from the store again.
      restore(conversation, before);
      this.#cache.delete(conversation.id);
      throw error;
    }
    if (outcome !== 'committed') {
      this.#cache.delete(conversation.id);
      if (outcome === 'not-found') throw unknownConversation(conversation.id);
      throw conflict('The conversation was changed elsewhere at the same time; retry.');
    }
    this.#queueAudit(conversation);
    // Pushed out of the cache during the turn, a reader may have cached the revision before this one meanwhile.
    this.#remember(conversation);
  }

  /** Hands the audit entries of committed turns to the ledger. */
  #queueAudit(conversation: LiveConversation): void {
    if (conversation.unqueuedAudit.length > 0) this.#options.audit?.enqueue(conversation.unqueuedAudit.splice(0));
  }

  async #load(conversationId: string): Promise<LiveConversation> {
    checkConversationId(conversationId);
    const cached = this.#cache.get(conversationId);
    if (cached) {
      const current = this.#options.cluster.shared ? await this.#current(cached) : cached;
      if (current) {
        this.#remember(current);
        return current;
      }
    }
    const conversation = await this.#loadStored(conversationId);
    if (!conversation) throw unknownConversation(conversationId);
    const raced = this.#cache.get(conversationId);
    if (raced && raced !== cached && raced.revision >= conversation.revision) return raced;
    this.#remember(conversation);
    return conversation;
  }

  /**
   * The stored conversation; from a store that reads without waiting, with the text of its latest steps only. Not
   * when other instances share the store: a cached copy is then brought up to date by reading the steps after it
   * (`#current`), which a copy reading its earlier steps later could not trust.
   */
  async #loadStored(id: string): Promise<LiveConversation | undefined> {
    const store = this.#store;
    if (store.loadLatest === undefined || store.readStepsNow === undefined || this.#options.cluster.shared) {
      const stored = await store.load(id);
      return stored && fromStored(stored.row, compactStored([], stored.steps));
    }
    const latest = await store.loadLatest(id, this.#heldSteps);
    if (!latest) return undefined;
    const steps: StoredStep[] = [];
    const earlier = new EarlierSteps(id, steps, (fromIndex, toIndex) => store.readStepsNow?.(id, fromIndex, toIndex));
    steps.push(...earlier.notRead(latest.row.stepCount - latest.steps.length));
    return fromStored(latest.row, compactStored(steps, latest.steps), earlier);
  }

  /**
   * The cached conversation brought up to the stored revision (another instance may have moved it on): only the
   * steps changed since the cached revision are read. Undefined when it must be loaded whole.
   */
  async #current(cached: LiveConversation): Promise<LiveConversation | undefined> {
    let row = await this.#store.loadRow(cached.id);
    for (let attempt = 0; row && attempt < 3; attempt++) {
      if (row.revision === cached.revision) return cached;
      const log = (JSON.parse(row.stateJson) as StoredState).truncations ?? emptyTruncationLog;
      if (cached.revision < log.completeFrom) break;
      let from = Math.min(cached.steps.length, row.stepCount);
      for (const entry of log.entries) if (entry.revision > cached.revision) from = Math.min(from, entry.fromIndex);
      const fresh = await this.#store.loadFrom(cached.id, from);
      if (!fresh) break;
      if (fresh.row.revision === row.revision)
        return fromStored(fresh.row, compactStored(cached.steps.slice(0, from), fresh.steps));
      row = fresh.row;
    }
    this.#cache.delete(cached.id);
    return undefined;
  }

  /**
   * A conversation enters the cache when it is used after its start, not at its start: one that is started and
   * never continued (an abandoned chat window, a one-off call) takes no place from conversations in use, nor
   * leaves its copy behind for the collector. Its first use after the start reads it from the store once.
   */
  #startedHere(conversation: LiveConversation): void {
    if (conversation.state === 'ENDED') return;
    if (this.#uncachedStarts.size >= UNCACHED_STARTS_KEPT) {
      const oldest = this.#uncachedStarts.keys().next().value;
      if (oldest !== undefined) this.#uncachedStarts.delete(oldest);
    }
    this.#uncachedStarts.set(conversation.id, conversation.createdOn);
  }

  #remember(conversation: LiveConversation): void {
    this.#uncachedStarts.delete(conversation.id);
    conversation.earlier?.holdLatest(this.#heldSteps);
    // The cache sizes an entry only when its value changes; a conversation grows in place.
    this.#cache.delete(conversation.id);
    this.#cache.set(conversation.id, conversation);
  }

  async #loadLongTermProperties(userId: string): Promise<Record<string, Property>> {
    const stored = await this.#options.userProperties.load(userId);
    const properties: Record<string, Property> = {};
    for (const [name, json] of stored) properties[name] = { name, value: JSON.parse(json), scope: 'longTerm' };
    return properties;
  }

  /** Writes the long-term properties this turn changed. */
  async #saveLongTermProperties(
    conversation: LiveConversation,
    before: Readonly<Record<string, Property>>,
  ): Promise<void> {
    const changed = new Map<string, string>();
    for (const property of Object.values(conversation.properties)) {
      if (property.scope !== 'longTerm') continue;
      const json = JSON.stringify(property.value);
      const previous = before[property.name];
      if (previous?.scope !== 'longTerm' || JSON.stringify(previous.value) !== json) changed.set(property.name, json);
    }
    if (changed.size > 0) await this.#options.userProperties.upsert(conversation.userId, changed, this.#clock());
  }
}

// --- helpers ---------------------------------------------------------------------------------------------------

interface Snapshot {
  readonly truncations: TruncationLog;
  readonly state: ConversationStateName;
  readonly lastModifiedOn: number;
  readonly revision: number;
  readonly stepCount: number;
  readonly redo: StoredStep[];
  readonly properties: Record<string, Property>;
  readonly tallies: Tallies;
  readonly auditSequence: number;
  readonly pending: PendingTurn | undefined;
  readonly queued: QueuedMessage[];
}

function snapshotOf(conversation: LiveConversation): Snapshot {
  const { state, lastModifiedOn, revision, redo, properties, tallies, truncations, auditSequence, pending, queued } =
    conversation;
  return {
    pending,
    queued,
    state,
    lastModifiedOn,
    revision,
    stepCount: conversation.steps.length,
    redo,
    properties,
    tallies,
    truncations,
    auditSequence,
  };
}

/** Puts a conversation back as it was (a failed write or an interrupted turn must leave no trace). */
function restore(conversation: LiveConversation, snapshot: Snapshot): void {
  conversation.state = snapshot.state;
  conversation.lastModifiedOn = snapshot.lastModifiedOn;
  conversation.revision = snapshot.revision;
  conversation.steps.length = snapshot.stepCount;
  latestKeepsParsed(conversation.steps);
  conversation.redo = snapshot.redo;
  conversation.properties = snapshot.properties;
  conversation.tallies = snapshot.tallies;
  conversation.truncations = snapshot.truncations;
  conversation.auditSequence = snapshot.auditSequence;
  conversation.unqueuedAudit = [];
  conversation.pending = snapshot.pending;
  conversation.queued = snapshot.queued;
}

/** Long-term properties stay as they are; conversation-scoped ones become those recorded with `step`. */
function restoredProperties(current: Readonly<Record<string, Property>>, step: StoredStep): Record<string, Property> {
  const properties: Record<string, Property> = {};
  for (const property of Object.values(current))
    if (property.scope === 'longTerm') properties[property.name] = property;
  for (const property of Object.values(step.properties))
    if (property.scope !== 'longTerm') properties[property.name] = property;
  return properties;
}

/** What identifies a message's content for retries: its input and context. */
function fingerprintOf(message: Message): string {
  return createHash('sha256')
    .update(JSON.stringify([message.input, message.context]))
    .digest('hex');
}

function toRow(conversation: LiveConversation): ConversationRow {
  const state: StoredState = {
    properties: conversation.properties,
    redo: conversation.redo,
    tallies: conversation.tallies,
    truncations: conversation.truncations,
    auditSequence: conversation.auditSequence,
    ...(conversation.pending ? { pending: conversation.pending } : {}),
    ...(conversation.queued.length > 0 ? { queued: conversation.queued } : {}),
  };
  return {
    id: conversation.id,
    agentId: conversation.agentId,
    agentVersion: conversation.agentVersion,
    userId: conversation.userId,
    environment: conversation.environment,
    state: conversation.state,
    createdOn: conversation.createdOn,
    lastModifiedOn: conversation.lastModifiedOn,
    stepCount: conversation.steps.length,
    revision: conversation.revision,
    stateJson: JSON.stringify(state),
  };
}

/**
 * Replaces the steps from index `from` on (just made, not stored yet) by their compact form, and answers the JSON
 * text the store keeps of each. Only the last step keeps its parsed parts. `inCache`: whether the cache holds the
 * conversation (`CompactStep.of`).
 */
function compactFrom(steps: StoredStep[], from: number, inCache = true): string[] {
  const texts: string[] = [];
  for (let index = from; index < steps.length; index++) {
    const { step, json } = CompactStep.of(steps[index]!, inCache);
    step.placeAfter(steps[index - 1]);
    steps[index] = step;
    texts.push(json);
  }
  latestKeepsParsed(steps);
  return texts;
}

/** `kept` (steps cached before) followed by `stored` (JSON text read from the store), all compact. */
function compactStored(kept: StoredStep[], stored: readonly StoredStepText[]): StoredStep[] {
  const steps = kept;
  const cachedLatest = steps.at(-1);
  if (stored.length > 0 && cachedLatest instanceof CompactStep) cachedLatest.forgetParsed();
  for (const [offset, text] of stored.entries()) {
    const step = CompactStep.fromStored(text, offset === stored.length - 1);
    step.placeAfter(steps.at(-1));
    steps.push(step);
  }
  latestKeepsParsed(steps);
  return steps;
}

/**
 * What a cached conversation counts for: its steps' text (the latest `heldSteps` when it reads earlier ones from the
 * store), an object per step, and a share for its header, properties and tallies.
 */
function cachedSize(conversation: LiveConversation, heldSteps: number): number {
  const { steps, earlier } = conversation;
  // Each compact step counts its text and that of the steps placed before it (none before those loaded).
  const through = (step: StoredStep | undefined) => (step instanceof CompactStep ? step.textThrough : 0);
  const notHeld = earlier ? through(steps[steps.length - heldSteps - 1]) : 0;
  const text = Math.max(0, through(steps.findLast((step) => step instanceof CompactStep)) - notHeld);
  return CONVERSATION_OVERHEAD + steps.length * STEP_OBJECT_BYTES + text;
}

const CONVERSATION_OVERHEAD = 2048;
/** The heap a step takes apart from its text (a `CompactStep` whose text is not read: 144 bytes, measured). */
const STEP_OBJECT_BYTES = 144;

/** Only the latest step keeps its parsed parts: the one before it forgets them. */
function latestKeepsParsed(steps: readonly StoredStep[]): void {
  const previous = steps.at(-2);
  if (previous instanceof CompactStep) previous.forgetParsed();
  const latest = steps.at(-1);
  if (latest instanceof CompactStep) latest.keepParsed();
}

function fromStored(row: ConversationRow, steps: StoredStep[], earlier?: EarlierSteps): LiveConversation {
  const { stepCount: _stepCount, stateJson, ...header } = row;
  const state = JSON.parse(stateJson) as StoredState;
  return {
    ...header,
    steps,
    earlier,
    redo: state.redo,
    properties: state.properties,
    tallies: state.tallies,
    truncations: state.truncations ?? emptyTruncationLog,
    auditSequence: state.auditSequence ?? 0,
    unqueuedAudit: [],
    pending: state.pending,
    queued: state.queued ?? [],
  };
}

const unknownConversation = (id: string) => notFound(`No conversation with id ${id}.`);

function checkConversationId(id: string): void {
  if (!isId(id)) throw unknownConversation(id);
}

/**
 * The conversation, unless checks apply to the caller and it belongs to another user: then a 404 like an unknown
 * id, so that trying ids tells nothing about which exist.
 */
function ownedBy<C extends Conversation>(conversation: C, caller: CallerAccess | undefined): C {
  if (caller?.restricted && conversation.userId !== caller.principal.name) throw unknownConversation(conversation.id);
  return conversation;
}

const keyReused = () =>
  new AppError(
    'unprocessable',
    'This Idempotency-Key was already used for a different message in this conversation; use a new key for a new message.',
  );

function ended(conversationId: string): AppError {
  return new AppError('gone', `Conversation ${conversationId} has ended.`);
}
