import { Type } from '@sinclair/typebox';
import { McpClients } from '../../integrations/mcp/mcp-client.ts';
import type { Tracing } from '../../ops/tracing.ts';
import { closed } from '../../resources/schemas/common.ts';
import type { McpCallsConfiguration } from '../../resources/schemas/mcpcalls.ts';
import { defineTask, DeploymentError, stepUri, uriReferences } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import type { SecretResolver } from '../../security/secret-references.ts';
import { isRecord } from '../../shared/json.ts';
import { TemplateData } from '../../templating/data-model.ts';
import { SecretValues } from '../httpcalls/field-template.ts';
import { compileMcpSet, renderFields, targetOf, type CompiledMcpCall } from './mcp-set.ts';

/**
 * `svc://ai.svc.mcpcalls`: an MCP-call set in a workflow. Its server's tools become tools of the LLM tasks of the
 * same workflow (unless a task sets `enableMcpCallTools: false`), and its `mcpCalls` call a tool when one of their
 * actions occurs, with templated arguments; a result is stored as step data `mcpCalls:<responseObjectName>` and
 * in the step's `mcpCalls` output map (`{memory.current.mcpCalls.<name>}`), parsed when it is JSON. A failing call
 * fails the turn with the reason.
 */

export const MCP_CALLS_TASK_TYPE = 'ai.svc.mcpcalls';

/** The MCP client and the vault resolver the MCP steps and the LLM tasks share. */
export interface McpServices {
  readonly clients: McpClients;
  readonly secrets: SecretResolver;
}

export function createMcpServices(
  fetch: typeof globalThis.fetch,
  secrets: SecretResolver,
  tracing?: Tracing,
): McpServices {
  return { clients: new McpClients(fetch, tracing), secrets };
}

const uri = Type.Optional(
  Type.String({
    description: 'Reference of the MCP-call set: svc://ai.svc.mcpcalls/mcpcallsstore/mcpcalls/<id>?version=<n>.',
  }),
);
const UriOnly = closed({ uri }, { description: 'The MCP-call set.' });

export const mcpCallsTask = defineTask({
  type: MCP_CALLS_TASK_TYPE,
  configSchema: UriOnly,
  extensionsSchema: UriOnly,
  references: uriReferences('mcpcalls'),
  async compile(config, extensions, context) {
    const mcp = context.services.mcp;
    if (!mcp) throw new DeploymentError('MCP calls are not available in this service.');
    const reference = stepUri(config, extensions);
    if (!reference)
      throw new DeploymentError("The MCP-calls extension (svc://ai.svc.mcpcalls) needs the 'uri' of an MCP-call set.");
    const set = compileMcpSet((await context.resolve(reference, 'mcpcalls')) as McpCallsConfiguration, reference);
    return {
      type: MCP_CALLS_TASK_TYPE,
      async execute(turn) {
        const due = set.calls.filter(
          (call) => call.anyAction || turn.actions.some((action) => call.actions.has(action)),
        );
        if (due.length === 0) return;
        const data = new TemplateData(turn);
        const secrets = new SecretValues();
        const target = await targetOf(set, data.get(), mcp.secrets, secrets);
        for (const call of due) {
          const args = await renderFields(call.arguments, data.get(), mcp.secrets, secrets);
          let result: string;
          try {
            result = await mcp.clients.callTool(target, call.toolName, args, turn.signal);
          } catch (error) {
            if (turn.signal.aborted) throw turn.signal.reason;
            const reason = error instanceof Error ? error.message : String(error);
            throw new Error(
              secrets.mask(`The MCP call '${call.name}' (tool '${call.toolName}' at ${set.url}) failed: ${reason}`),
            );
          }
          if (call.saveResponse) save(turn, call, secrets.mask(result));
        }
      },
    };
  },
});

function save(turn: Turn, call: CompiledMcpCall, result: string): void {
  let value: unknown = result;
  try {
    value = JSON.parse(result) as unknown;
  } catch {
    // a text result stays text
  }
  turn.set(`mcpCalls:${call.responseObjectName}`, value);
  const current = turn.output.mcpCalls;
  turn.setOutput('mcpCalls', { ...(isRecord(current) ? current : {}), [call.responseObjectName]: value });
}
