import { TaskRegistry, type CompileContext, type CompiledTask, type TaskDefinition } from '../../src/runtime/tasks.ts';
import type { TaskServices } from '../../src/tasks/services.ts';

/**
 * Compiles one workflow step of `task` the way a deployment does: `config` and `extensions` are checked against the
 * task's schemas first (a refusal is a DeploymentError naming the field), then the task compiles them.
 */
export function compileStep(
  task: TaskDefinition,
  step: { config?: unknown; extensions?: unknown; type?: string },
  resolve: CompileContext['resolve'] = async () => {
    throw new Error('nothing to resolve');
  },
  services: TaskServices = {},
): Promise<CompiledTask> {
  return new TaskRegistry([task], services).compile(step.type ?? task.type, step.config ?? {}, step.extensions ?? {}, {
    workflowId: 'w',
    resolve,
  });
}
