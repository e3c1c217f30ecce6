import type { TaskDefinition } from '../runtime/tasks.ts';
import type { SecretWriter } from '../properties/secret-properties.ts';
import type { KnowledgeService } from '../knowledge/service.ts';
import { behaviorTask } from './behavior/behavior-task.ts';
import { createHttpCallExecutor, type HttpCallExecutorOptions } from './httpcalls/executor.ts';
import { httpCallsTask } from './httpcalls/httpcalls-task.ts';
import { createHttpCallTools } from './llm/http-call-tools.ts';
import { createLlmServices, llmTask, type LlmTaskOptions } from './llm/llm-task.ts';
import { createMcpServices, mcpCallsTask } from './mcpcalls/mcpcalls-task.ts';
import { outputTask } from './output/output-task.ts';
import { parserTask } from './parser/parser-task.ts';
import { propertyTask } from './property/property-task.ts';
import { ragTask } from './rag/rag-task.ts';
import type { TaskServices } from './services.ts';
import { templatingTask } from './templating/templating-task.ts';

/** Every lifecycle task type the service ships; a new task type is one module plus one line here. */
export const builtInTasks: readonly TaskDefinition[] = [
  parserTask,
  behaviorTask,
  propertyTask,
  outputTask,
  templatingTask,
  httpCallsTask,
  mcpCallsTask,
  ragTask,
  llmTask,
];

export interface TaskServiceOptions {
  readonly secretWriter?: SecretWriter | undefined;
  /** Secrets resolver, URL guard and defaults of HTTP calls. */
  readonly httpCalls?: HttpCallExecutorOptions | undefined;
  /** Secrets, tool history and provider defaults of LLM tasks. */
  readonly llm?: Omit<LlmTaskOptions, 'httpCallTools' | 'mcp'> | undefined;
  readonly knowledge?: KnowledgeService | undefined;
}

/** The services the built-in tasks use, built once at start-up. */
export function createTaskServices(options: TaskServiceOptions): TaskServices {
  const httpCalls = options.httpCalls
    ? createHttpCallExecutor({ ...options.httpCalls, secretWriter: options.secretWriter })
    : undefined;
  const mcp = options.llm
    ? createMcpServices(
        options.llm.providerDefaults?.fetch ?? globalThis.fetch,
        options.llm.secrets,
        options.llm.tracing,
      )
    : undefined;
  return {
    secretWriter: options.secretWriter,
    httpCalls,
    mcp,
    llm: options.llm
      ? createLlmServices({ ...options.llm, httpCallTools: httpCalls && createHttpCallTools(httpCalls), mcp })
      : undefined,
    knowledge: options.knowledge,
  };
}
