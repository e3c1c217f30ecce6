import { invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import type { AuditDraft } from '../ops/audit-entry.ts';
import { summarize } from '../ops/audit-entry.ts';
import type { ContextValue, Conversation } from './memory.ts';
import type { PartialStep, PendingToolCall, Turn } from './turn.ts';

/**
 * Human in the loop: a turn that waits for a person (the original's PAUSE_CONVERSATION and tool approvals), what
 * a person may decide, and how the turn goes on. The conversation service stores the waiting turn with the
 * conversation (so it survives a restart and is seen by every instance) and runs the resumed turn; this module
 * holds the rules.
 */

export const PAUSE_KINDS = ['pause', 'tool-approval'] as const;
export type PauseKind = (typeof PAUSE_KINDS)[number];

/** A turn waiting for a person, stored with its conversation (state AWAITING_HUMAN). */
export interface PendingTurn {
  readonly id: string;
  readonly kind: PauseKind;
  /** The task type that paused the turn. */
  readonly task: string;
  /** Where the pipeline goes on (see `runPipeline`). */
  readonly resumeAt: number;
  readonly pausedAt: number;
  /** The step as the turn left it. */
  readonly step: PartialStep;
  /** The message of the waiting turn (step 0 for a pause on the conversation start). */
  readonly input: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  readonly isStart: boolean;
  /** Tool calls waiting for approval (kind `tool-approval`). */
  readonly toolCalls: readonly PendingToolCall[];
  /** What the asking task needs to go on (kind `tool-approval`). */
  readonly taskState?: unknown;
  /** Set when the timeout policy `escalate` applied. */
  readonly escalatedAt?: number;
}

/** A message that arrived while the conversation waited; it runs once the waiting turn is done. */
export interface QueuedMessage {
  readonly input: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  readonly receivedAt: number;
  /** The request's `Idempotency-Key` and message fingerprint: its retries are not queued again. */
  readonly idempotencyKey?: string;
  readonly fingerprint?: string;
}

export const DECISIONS = ['approve', 'reject', 'answer'] as const;
export type DecisionAction = (typeof DECISIONS)[number];

/**
 * What a person decided. `approve` goes on where the turn paused (tool calls with `arguments` edited per tool
 * call id); `reject` ends the turn without the rest of the pipeline (a rejected tool call tells the model it was
 * rejected, and the model answers); `answer` ends the turn with the person's text as the agent's answer.
 */
export interface Decision {
  readonly action: DecisionAction;
  readonly answer?: string | undefined;
  readonly reason?: string | undefined;
  readonly arguments?: Readonly<Record<string, Record<string, unknown>>> | undefined;
  /** Who decided: the principal, or `timeout-policy`. */
  readonly actor: string;
}

/** The decisions on tool calls that the asking task reads from `turn.resumption` (`ToolResumption`). */
export interface ToolResumption {
  readonly state: unknown;
  readonly decisions: ReadonlyArray<{
    readonly toolCallId: string;
    readonly approved: boolean;
    readonly arguments: Record<string, unknown>;
    readonly reason?: string | undefined;
  }>;
}

/** Step data key of the decision in the resumed step (not public). */
export const DECISION_KEY = 'hitl:decision';
/** Step data key of the text a person answered in place of the agent (decision `answer`). */
export const HUMAN_ANSWER_KEY = 'output:text:human';

/** What is wrong with a decision's `answer` (the decision 'answer' needs its text, the others take none), if anything. */
export function answerProblem(action: DecisionAction, answer: string | undefined): string | undefined {
  if (action === 'answer' && (answer === undefined || answer.trim() === ''))
    return "The decision 'answer' needs the text of the answer in 'answer'.";
  if (action !== 'answer' && answer !== undefined) return "'answer' is only read with the decision 'answer'.";
  return undefined;
}

/** Refuses a decision that does not fit the waiting turn (400 naming what is wrong). */
export function checkDecision(pending: PendingTurn, decision: Omit<Decision, 'actor'>): void {
  const problem = answerProblem(decision.action, decision.answer);
  if (problem !== undefined) throw invalid(problem, { path: '$.answer' });
  if (decision.arguments === undefined) return;
  if (pending.kind !== 'tool-approval' || decision.action !== 'approve')
    throw invalid("'arguments' edits the arguments of tool calls being approved; this turn waits for no such call.", {
      path: '$.arguments',
    });
  const known = new Set(pending.toolCalls.map((call) => call.toolCallId));
  for (const id of Object.keys(decision.arguments))
    if (!known.has(id))
      throw invalid(`No tool call ${id} waits for approval here.`, { path: `$.arguments.${id}`, toolCallId: id });
}

/**
 * Prepares the resumed turn for the decision; answers whether the pipeline goes on (from `pending.resumeAt`) or
 * the turn ends as it is.
 */
export function applyDecision(turn: Turn, pending: PendingTurn, decision: Decision, now: number): boolean {
  turn.set(DECISION_KEY, {
    action: decision.action,
    pauseType: pending.kind,
    actor: decision.actor,
    decidedAt: now,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
  if (decision.action === 'answer') {
    turn.set(HUMAN_ANSWER_KEY, decision.answer!, true);
    turn.appendOutput('output', { type: 'text', text: decision.answer!, delay: 0 });
    return false;
  }
  if (pending.kind === 'pause') return decision.action === 'approve';
  const resumption: ToolResumption = {
    state: pending.taskState,
    decisions: pending.toolCalls.map((call) => ({
      toolCallId: call.toolCallId,
      approved: decision.action === 'approve',
      arguments: decision.arguments?.[call.toolCallId] ?? call.arguments,
      reason: decision.reason,
    })),
  };
  turn.resumption = resumption;
  return true;
}

/** The audit ledger's entry of a decision (who decided what, on which waiting turn). */
export function decisionAuditDraft(
  conversation: Conversation,
  pending: PendingTurn,
  decision: Decision,
  stepIndex: number,
  sequence: number,
  now: number,
): AuditDraft {
  return {
    id: newId(now),
    conversationId: conversation.id,
    agentId: conversation.agentId,
    agentVersion: conversation.agentVersion,
    userId: conversation.userId,
    environment: conversation.environment,
    stepIndex,
    workflowId: '',
    taskId: `hitl:${pending.id}`,
    taskType: 'hitl.decision',
    taskIndex: pending.resumeAt,
    durationMs: now - pending.pausedAt,
    actions: [],
    input: { pauseType: pending.kind, task: pending.task, toolCalls: summarize(pending.toolCalls) },
    output: {
      decision: decision.action,
      actor: decision.actor,
      ...(decision.reason === undefined ? {} : { reason: summarize(decision.reason) }),
      ...(decision.answer === undefined ? {} : { answer: summarize(decision.answer) }),
      ...(decision.arguments === undefined ? {} : { arguments: summarize(decision.arguments) }),
    },
    llmDetail: null,
    outcome: 'ok',
    error: null,
    timestamp: new Date(now).toISOString(),
    sequence,
  };
}

/** What a person sees of a waiting turn (the pending-approvals list, the approval status). */
export interface PendingApproval {
  readonly approvalId: string;
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId: string;
  readonly environment: string;
  readonly pauseType: PauseKind;
  readonly task: string;
  readonly pausedAt: number;
  readonly input: string;
  /** The texts the agent said in the waiting turn so far. */
  readonly output: readonly string[];
  readonly toolCalls: readonly PendingToolCall[];
  readonly queuedMessages: number;
  readonly escalated: boolean;
}

export function pendingApprovalOf(
  conversation: Conversation,
  pending: PendingTurn,
  queuedMessages: number,
): PendingApproval {
  const items = pending.step.output.output;
  const output = Array.isArray(items)
    ? items.flatMap((item) =>
        typeof item === 'string'
          ? [item]
          : item !== null && typeof item === 'object' && typeof (item as { text?: unknown }).text === 'string'
            ? [(item as { text: string }).text]
            : [],
      )
    : [];
  return {
    approvalId: pending.id,
    conversationId: conversation.id,
    agentId: conversation.agentId,
    agentVersion: conversation.agentVersion,
    userId: conversation.userId,
    environment: conversation.environment,
    pauseType: pending.kind,
    task: pending.task,
    pausedAt: pending.pausedAt,
    input: pending.input,
    output,
    toolCalls: pending.toolCalls,
    queuedMessages,
    escalated: pending.escalatedAt !== undefined,
  };
}
