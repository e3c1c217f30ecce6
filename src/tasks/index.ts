import type { LifecycleTask } from '../runtime/tasks.ts';
import { renderTemplate } from '../templating/engine.ts';
import { createBehaviorTask } from './behavior/behavior-task.ts';
import { createOutputTask } from './output/output-task.ts';
import { createParserTask } from './parser/parser-task.ts';
import { createPropertyTask } from './property/property-task.ts';
import { createTemplatingTask } from './templating/templating-task.ts';

/** Every lifecycle task type the service ships, registered at start-up. */
export function builtInTasks(): LifecycleTask[] {
  return [
    createParserTask(),
    createBehaviorTask(),
    createPropertyTask(renderTemplate),
    createOutputTask(),
    createTemplatingTask(),
  ];
}
