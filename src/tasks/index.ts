import type { LifecycleTask } from '../runtime/tasks.ts';
import { createBehaviorTask } from './behavior/behavior-task.ts';
import { createHttpCallsTask, type HttpCallsTaskOptions } from './httpcalls/httpcalls-task.ts';
import { createHttpCallTools } from './llm/http-call-tools.ts';
import { createLlmTask, type LlmTaskOptions } from './llm/llm-task.ts';
import { createOutputTask } from './output/output-task.ts';
import { createParserTask } from './parser/parser-task.ts';
import type { SecretWriter } from '../properties/secret-properties.ts';
import { createPropertyTask } from './property/property-task.ts';
import { createTemplatingTask } from './templating/templating-task.ts';

export interface BuiltInTaskOptions {
  /** Where secret-scoped properties store their values (the vault); without it they fail the turn. */
  readonly secretWriter?: SecretWriter | undefined;
  /** Secrets resolver, URL guard and defaults of HTTP calls; without it the HTTP-calls task is not registered. */
  readonly httpCalls?: HttpCallsTaskOptions | undefined;
  /** Secrets, tool history and provider defaults of LLM tasks; without it the LLM task is not registered. */
  readonly llm?: Omit<LlmTaskOptions, 'httpCallTools'> | undefined;
}

/** Every lifecycle task type the service ships, registered at start-up. */
export function builtInTasks(options: BuiltInTaskOptions = {}): LifecycleTask[] {
  const httpCalls = options.httpCalls ? createHttpCallsTask({ ...options.httpCalls, secretWriter: options.secretWriter }) : undefined;
  return [
    createParserTask(),
    createBehaviorTask(),
    createPropertyTask({ secretWriter: options.secretWriter }),
    createOutputTask(),
    createTemplatingTask(),
    ...(httpCalls ? [httpCalls] : []),
    ...(options.llm ? [createLlmTask({ ...options.llm, httpCallTools: httpCalls && createHttpCallTools(httpCalls.executor) })] : []),
  ];
}
