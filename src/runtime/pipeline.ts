import type { CompiledAgent } from './compiler.ts';
import { RESERVED_ACTIONS } from './memory.ts';
import type { Turn } from './turn.ts';

export type PipelineOutcome = 'completed' | 'stopped';

/** What an observer learns after each executed task (the audit ledger records it). */
export interface TaskObservation {
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
}

/** Called after each executed task; must be cheap and must not throw. */
export type PipelineObserver = (observation: TaskObservation, turn: Turn) => void;

/** Context and input of the turn as step data; stored again before each workflow, under the same keys. */
function storeTurnInputs(turn: Turn): void {
  for (const [name, value] of Object.entries(turn.context)) turn.set(`context:${name}`, value);
  if (turn.input.trim() !== '') turn.set('input:initial', turn.input, true);
}

/**
 * Runs every workflow of the agent in order, each task in order, against the same step. `STOP_CONVERSATION`
 * among the actions after a task ends the turn at once. A task that throws aborts the turn (the caller decides
 * what that means for the conversation).
 */
export async function runPipeline(
  agent: CompiledAgent,
  turn: Turn,
  observer?: PipelineObserver,
): Promise<PipelineOutcome> {
  storeTurnInputs(turn);
  let taskIndex = 0;
  for (const workflow of agent.workflows) {
    turn.originWorkflowId = workflow.id;
    storeTurnInputs(turn);
    for (const [workflowTaskIndex, task] of workflow.tasks.entries()) {
      turn.signal.throwIfAborted();
      turn.emit({ type: 'task_start', task: task.type });
      if (observer)
        await observed(observer, turn, task, {
          workflowId: workflow.id,
          taskType: task.type,
          taskIndex,
          workflowTaskIndex,
        });
      else await task.execute(turn);
      taskIndex++;
      turn.emit({ type: 'task_complete', task: task.type });
      if (turn.actions.includes(RESERVED_ACTIONS.stop)) return 'stopped';
    }
  }
  return 'completed';
}

/** Runs one task and tells the observer what it did (also when it threw). Walks only the current step. */
async function observed(
  observer: PipelineObserver,
  turn: Turn,
  task: CompiledAgent['workflows'][number]['tasks'][number],
  where: Pick<TaskObservation, 'workflowId' | 'taskType' | 'taskIndex' | 'workflowTaskIndex'>,
): Promise<void> {
  const before = new Map(turn.entriesWithPrefix('').map((entry) => [entry.key, entry]));
  const actionsBefore = turn.actions;
  const started = performance.now();
  const report = (error?: unknown) => {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const writtenKeys = turn
      .entriesWithPrefix('')
      .filter((entry) => before.get(entry.key) !== entry)
      .map((entry) => entry.key);
    const observation: TaskObservation =
      error === undefined
        ? { ...where, durationMs, writtenKeys, actionsBefore }
        : { ...where, durationMs, writtenKeys, actionsBefore, error };
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
