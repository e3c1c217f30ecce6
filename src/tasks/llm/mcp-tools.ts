import { McpToolError } from '../../integrations/mcp/mcp-client.ts';
import type { McpCallsConfiguration } from '../../resources/schemas/mcpcalls.ts';
import type { CompileContext } from '../../runtime/tasks.ts';
import { ToolFailure, toolName, type ToolDefinition } from '../../llm/tool-definitions.ts';
import type { SecretValues } from '../httpcalls/field-template.ts';
import { compileMcpSet, targetOf, usableTools, type CompiledMcpSet } from '../mcpcalls/mcp-set.ts';
import { MCP_CALLS_TASK_TYPE, type McpServices } from '../mcpcalls/mcpcalls-task.ts';

/**
 * The tools of the MCP servers of an LLM task's workflow (its `svc://ai.svc.mcpcalls` steps), offered in agent mode
 * unless the task sets `enableMcpCallTools: false`. A tool is named as its server lists it (`[a-z0-9_]`), prefixed
 * with the set's `name` when it has one; the server's whitelist and blacklist apply.
 */

export async function workflowMcpSets(context: CompileContext): Promise<CompiledMcpSet[]> {
  const sets: CompiledMcpSet[] = [];
  for (const step of context.workflowSteps ?? []) {
    const reference = (step.config as { uri?: unknown } | undefined)?.uri;
    if (step.type !== MCP_CALLS_TASK_TYPE || typeof reference !== 'string') continue;
    sets.push(compileMcpSet((await context.resolve(reference, 'mcpcalls')) as McpCallsConfiguration, reference));
  }
  return sets;
}

/** The tools of the sets this turn (tool lists are cached by the client); a server that cannot be reached throws. */
export async function mcpToolDefinitions(
  sets: readonly CompiledMcpSet[],
  mcp: McpServices,
  data: Readonly<Record<string, unknown>>,
  secrets: SecretValues,
  signal: AbortSignal,
): Promise<ToolDefinition[]> {
  const definitions: ToolDefinition[] = [];
  for (const set of sets) {
    const target = await targetOf(set, data, mcp.secrets, secrets);
    const tools = await mcp.clients.listTools(target, signal).catch((error: unknown) => {
      throw new Error(
        `the MCP server ${set.url} cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    for (const tool of usableTools(set, tools)) {
      definitions.push({
        name: toolName(set.name === undefined ? tool.name : `${set.name}_${tool.name}`),
        description: tool.description || `The tool ${tool.name} of the MCP server ${set.name ?? set.url}.`,
        inputSchema: { type: 'object', ...tool.inputSchema },
        cacheable: false,
        async run(args, context) {
          try {
            return await mcp.clients.callTool(target, tool.name, args, context.signal);
          } catch (error) {
            if (context.signal.aborted) throw error;
            throw new ToolFailure(
              error instanceof McpToolError
                ? error.message
                : `The MCP server did not answer: ${error instanceof Error ? error.message : String(error)}`,
            );
          }
        },
      });
    }
  }
  return definitions;
}
