import type { TaskMeters } from '../ops/domain-metrics.ts';
import type { Tracing } from '../ops/tracing.ts';
import { scrubCredentialsInText } from '../security/secret-scrubbing.ts';
import type { CompiledAgent } from './compiler.ts';
import { RESERVED_ACTIONS } from './memory.ts';
import type { Turn } from './turn.ts';

/**
 * `paused`: a task added PAUSE_CONVERSATION, or asked for tool approvals; the turn waits for a person and goes on
 * at `resumeAt` (the task after the one that added the action, or the asking task itself).
 */
export type PipelineOutcome =
  | { readonly kind: 'completed' | 'stopped' }
  | { readonly kind: 'paused'; readonly resumeAt: number; readonly task: string };

/** Called after each executed task; must be cheap and must not throw. */
export type PipelineObserver = (observation: TaskObservation, turn: Turn) => void;

/**
 * Step data key (also a key of the step's output, `conversationOutputs[n].error`) of the reason a turn failed:
 * the task type and what went wrong, e.g. `ai.svc.httpcalls: HTTP call 'weather' failed: the connection was
 * refused (api.example.org:443)`. Public: every response shows it.
 */
export const TURN_ERROR_KEY = 'error';

/** Reasons are cut to this many characters. */
export const MAX_FAILURE_REASON_CHARS = 500;

/**
 * The reason shown to the user for a task that threw. Tasks mask the secret values they resolved in their errors
 * (HTTP calls, LLM providers); credentials that can sit in an error's text unknown (URL user parts, credential
 * query parameters, authorization values) are masked here.
 */
export function failureReason(taskType: string, error: unknown): string {
  const what =
    error instanceof Error ? error.message.trim() || error.name : typeof error === 'string' ? error : 'unknown error';
  const reason = scrubCredentialsInText(`${taskType}: ${what}`);
  return reason.length > MAX_FAILURE_REASON_CHARS ? `${reason.slice(0, MAX_FAILURE_REASON_CHARS - 1)}…` : reason;
}

/** Stores why the task failed in the step (data and output) and tells a live listener. */
function recordFailure(turn: Turn, taskType: string, error: unknown): void {
  const reason = failureReason(taskType, error);
  turn.set(TURN_ERROR_KEY, reason, true);
  turn.setOutput(TURN_ERROR_KEY, reason);
  turn.emit({ type: 'task_failed', task: taskType, reason });
}

/** Context and input of the turn as step data; stored again before each workflow, under the same keys. */
function storeTurnInputs(turn: Turn): void {
  for (const [name, value] of Object.entries(turn.context)) turn.set(`context:${name}`, value);
  if (turn.input.trim() !== '') turn.set('input:initial', turn.input, true);
}

/**
 * Runs every workflow of the agent in order, each task in order, against the same step. `STOP_CONVERSATION`
 * among the actions after a task ends the turn at once; `PAUSE_CONVERSATION` newly added by a task, or a task's
 * request for tool approvals, pauses it. A task that throws aborts the turn (the caller decides what that means for
 * the conversation) after its reason was stored in the step (`TURN_ERROR_KEY`). A resumed turn starts at the task
 * numbered `resumeAt` (counted over all workflows). `meters` learns each task's duration; with `tracing` each task
 * runs in a span of its own.
 */
export async function runPipeline(
  agent: CompiledAgent,
  turn: Turn,
  observer?: PipelineObserver,
  resumeAt = 0,
  meters?: TaskMeters,
  tracing?: Tracing,
): Promise<PipelineOutcome> {
  storeTurnInputs(turn);
  let taskIndex = 0;
  for (const workflow of agent.workflows) {
    if (taskIndex + workflow.tasks.length <= resumeAt) {
      taskIndex += workflow.tasks.length;
      continue;
    }
    turn.originWorkflowId = workflow.id;
    storeTurnInputs(turn);
    for (const [workflowTaskIndex, task] of workflow.tasks.entries()) {
      if (taskIndex < resumeAt) {
        taskIndex++;
        continue;
      }
      turn.signal.throwIfAborted();
      const pausedBefore = turn.actions.includes(RESERVED_ACTIONS.pause);
      turn.emit({ type: 'task_start', task: task.type });
      const startedAt = meters && performance.now();
      try {
        const where = { workflowId: workflow.id, taskType: task.type, taskIndex, workflowTaskIndex };
        if (tracing !== undefined) {
          const attributes = { 'svc.task.type': task.type, 'svc.task.index': taskIndex };
          await tracing.inSpan(`task ${task.type}`, attributes, async () =>
            observer ? observed(observer, turn, task, where) : task.execute(turn),
          );
        } else if (observer) await observed(observer, turn, task, where);
        else await task.execute(turn);
      } catch (error) {
        if (startedAt !== undefined) meters?.taskFinished(task.type, (performance.now() - startedAt) / 1000, true);
        if (!turn.signal.aborted) recordFailure(turn, task.type, error);
        throw error;
      }
      if (startedAt !== undefined) meters?.taskFinished(task.type, (performance.now() - startedAt) / 1000, false);
      taskIndex++;
      turn.emit({ type: 'task_complete', task: task.type });
      if (turn.actions.includes(RESERVED_ACTIONS.stop)) return { kind: 'stopped' };
      if (turn.toolApprovalRequest) return { kind: 'paused', resumeAt: taskIndex - 1, task: task.type };
      if (!pausedBefore && turn.actions.includes(RESERVED_ACTIONS.pause))
        return { kind: 'paused', resumeAt: taskIndex, task: task.type };
    }
  }
  return { kind: 'completed' };
}

/**
 * What an observer learns after each executed task (the audit ledger records it).
 *
 * A class rather than an object literal: V8 decides per literal site to allocate its objects straight in the old
 * generation once most of them survived a young-generation collection (allocation-site pretenuring), which these
 * did while the service started; from then on every task of every turn left one in the old generation, where it
 * stayed after its turn until the next full collection (with the objects it points to), and the heap grew to
 * several times what was live (issue 15, memory). Objects made by a constructor are never pretenured.
 */
export class TaskObservation {
  readonly workflowId: string;
  /** The task type id, e.g. `ai.svc.parser`. */
  readonly taskType: string;
  /** Position of the task in the whole pipeline (all workflows), from 0. */
  readonly taskIndex: number;
  /** Position of the task in its workflow, from 0. */
  readonly workflowTaskIndex: number;
  readonly durationMs: number;
  /** Step data keys the task wrote (new or rewritten), in the step's order. */
  readonly writtenKeys: readonly string[];
  /** The step's actions before the task ran. */
  readonly actionsBefore: readonly string[];
  /** Set when the task threw (the turn then ends). */
  readonly error?: unknown;

  constructor(
    where: Pick<TaskObservation, 'workflowId' | 'taskType' | 'taskIndex' | 'workflowTaskIndex'>,
    durationMs: number,
    writtenKeys: readonly string[],
    actionsBefore: readonly string[],
    error: unknown,
  ) {
    this.workflowId = where.workflowId;
    this.taskType = where.taskType;
    this.taskIndex = where.taskIndex;
    this.workflowTaskIndex = where.workflowTaskIndex;
    this.durationMs = durationMs;
    this.writtenKeys = writtenKeys;
    this.actionsBefore = actionsBefore;
    this.error = error;
  }
}

/** Runs one task and tells the observer what it did (also when it threw): the keys it wrote, from the turn's write log. */
async function observed(
  observer: PipelineObserver,
  turn: Turn,
  task: CompiledAgent['workflows'][number]['tasks'][number],
  where: Pick<TaskObservation, 'workflowId' | 'taskType' | 'taskIndex' | 'workflowTaskIndex'>,
): Promise<void> {
  const mark = turn.writeMark;
  const actionsBefore = turn.actions;
  const started = performance.now();
  const report = (error?: unknown) => {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const observation = new TaskObservation(where, durationMs, turn.writtenSince(mark), actionsBefore, error);
    try {
      observer(observation, turn);
    } catch {
      // an observer never breaks a turn
    }
  };
  try {
    await task.execute(turn);
  } catch (error) {
    if (!turn.signal.aborted) report(error ?? new Error('task failed'));
    throw error;
  }
  report();
}
