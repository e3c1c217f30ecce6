import type { CompiledAgent } from './compiler.ts';
import { RESERVED_ACTIONS } from './memory.ts';
import type { Turn } from './turn.ts';

export type PipelineOutcome = 'completed' | 'stopped';

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
export async function runPipeline(agent: CompiledAgent, turn: Turn): Promise<PipelineOutcome> {
  storeTurnInputs(turn);
  for (const workflow of agent.workflows) {
    turn.originWorkflowId = workflow.id;
    storeTurnInputs(turn);
    for (const task of workflow.tasks) {
      turn.signal.throwIfAborted();
      turn.emit({ type: 'task_start', task: task.type });
      await task.execute(turn);
      turn.emit({ type: 'task_complete', task: task.type });
      if (turn.actions.includes(RESERVED_ACTIONS.stop)) return 'stopped';
    }
  }
  return 'completed';
}
