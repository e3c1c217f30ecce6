import type { LifecycleTask } from '../runtime/tasks.ts';
import { createOutputTask } from './output/output-task.ts';

/** Every lifecycle task type the service ships, registered at start-up. */
export function builtInTasks(): LifecycleTask[] {
  return [createOutputTask()];
}
