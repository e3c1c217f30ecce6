import { jsonSchema, tool, type ToolSet } from 'ai';
import type { TurnEvent } from '../runtime/turn.ts';
import { ToolFailure, type ToolDefinition } from './tool-definitions.ts';
import type { ToolHistory } from './tool-history.ts';
import type { WebAccess } from './web-page.ts';

/**
 * Runs the model's tool calls through the tool infrastructure: cached result if fresh, else the rate limit, then
 * the tool itself. Every call is recorded in the tool history (costs, history) and in the task's trace; a failing
 * or refused call gives the model an error text instead of ending the turn.
 */

export interface TraceEntry {
  readonly tool: string;
  readonly arguments: unknown;
  readonly result: string;
  readonly cached: boolean;
  readonly error?: string;
}

export interface ToolCallScope {
  readonly conversationId: string;
  readonly signal: AbortSignal;
  readonly web: WebAccess;
  readonly emit: (event: TurnEvent) => void;
  readonly trace: TraceEntry[];
  /** Masks secret values in what is recorded. */
  readonly redact: (text: string) => string;
}

const MAX_RESULT_CHARS = 20_000;

export async function runToolCall(
  definition: ToolDefinition,
  args: Record<string, unknown>,
  history: ToolHistory,
  scope: ToolCallScope,
): Promise<string> {
  const name = definition.name;
  history.registerTool(name);
  scope.emit({ type: 'tool_call', tool: name, arguments: args });
  const started = history.now();
  const finish = (result: string, outcome: { cached?: boolean; rateLimited?: boolean; error?: string }) => {
    const shown = scope.redact(result);
    const error = outcome.error === undefined ? undefined : scope.redact(outcome.error);
    history.recordToolCall({
      tool: name,
      conversationId: scope.conversationId,
      arguments: args,
      result: shown,
      cached: outcome.cached ?? false,
      rateLimited: outcome.rateLimited ?? false,
      durationMs: history.now() - started,
      ...(error === undefined ? {} : { error }),
    });
    scope.trace.push({
      tool: name,
      arguments: args,
      result: shown,
      cached: outcome.cached ?? false,
      ...(error === undefined ? {} : { error }),
    });
    return result;
  };

  const cacheable = definition.cacheable !== false;
  const cached = cacheable ? history.cache.get(name, args) : undefined;
  if (cached !== undefined) return finish(cached, { cached: true });
  if (!(await history.rateLimits.tryAcquire(name))) {
    const message = `Rate limit exceeded for tool '${name}'; try again later.`;
    return finish(`Error: ${message}`, { rateLimited: true, error: message });
  }
  try {
    const raw = await definition.run(args, { signal: scope.signal, web: scope.web });
    const result = raw.length > MAX_RESULT_CHARS ? raw.slice(0, MAX_RESULT_CHARS) : raw;
    if (cacheable) history.cache.put(name, args, result);
    return finish(result, {});
  } catch (error) {
    if (scope.signal.aborted) throw error;
    const message =
      error instanceof ToolFailure
        ? error.message
        : `The tool failed: ${error instanceof Error ? error.message : String(error)}`;
    return finish(`Error: ${message}`, { error: message });
  }
}

/**
 * The AI SDK tool set for the given definitions, bound to one task run. A tool named in `needingApproval` gets no
 * `execute`: the model's call of it ends the tool loop unanswered, and waits for a person.
 */
export function toolSetOf(
  definitions: readonly ToolDefinition[],
  history: ToolHistory,
  scope: ToolCallScope,
  needingApproval: ReadonlySet<string> = new Set(),
): ToolSet {
  const tools: ToolSet = {};
  for (const definition of definitions) {
    const described = {
      description: definition.description,
      inputSchema: jsonSchema<Record<string, unknown>>(definition.inputSchema),
    };
    tools[definition.name] = needingApproval.has(definition.name)
      ? tool(described)
      : tool({
          ...described,
          execute: (args: Record<string, unknown>) => runToolCall(definition, args ?? {}, history, scope),
        });
  }
  return tools;
}
