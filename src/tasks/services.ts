import type { HttpCallExecutor } from './httpcalls/executor.ts';
import type { LlmServices } from './llm/llm-task.ts';
import type { McpServices } from './mcpcalls/mcpcalls-task.ts';
import type { SecretWriter } from '../properties/secret-properties.ts';
import type { KnowledgeService } from '../knowledge/service.ts';

/**
 * What the running service offers lifecycle tasks at deployment (built once at start-up, `createTaskServices` in
 * `index.ts`). A task whose service is missing does not deploy; the tasks' contracts never depend on these.
 */
export interface TaskServices {
  /** Where secret-scoped properties store their values (the vault); without it they fail the turn. */
  readonly secretWriter?: SecretWriter | undefined;
  /** Runs HTTP calls (keep-alive pools, URL guard, vault references); HTTP-call steps need it. */
  readonly httpCalls?: HttpCallExecutor | undefined;
  /** Model providers, tool history and the web tools' URL guard; LLM steps need it. */
  readonly llm?: LlmServices | undefined;
  /** The MCP client (guarded outbound fetch) and the vault resolver; MCP-call steps need it. */
  readonly mcp?: McpServices | undefined;
  /** Knowledge bases: search for LLM tasks' retrieval; knowledge-base steps need it. */
  readonly knowledge?: KnowledgeService | undefined;
}
