import {
  DEFAULT_MCP_TIMEOUT_MS,
  type McpServerTarget,
  type McpToolInfo,
  type McpTransport,
} from '../../integrations/mcp/mcp-client.ts';
import type { McpCallsConfiguration } from '../../resources/schemas/mcpcalls.ts';
import { DeploymentError } from '../../runtime/tasks.ts';
import type { SecretResolver } from '../../security/secret-references.ts';
import { TemplateSyntaxError } from '../../templating/engine.ts';
import {
  compileFieldTemplate,
  resolveSecrets,
  type FieldTemplate,
  type SecretValues,
} from '../httpcalls/field-template.ts';

/**
 * An MCP-call set compiled at deployment: the server, its header templates (vault references resolved per turn),
 * which tools may be used, and the calls triggered by actions with their argument templates.
 */

interface CompiledField {
  readonly field: FieldTemplate;
  readonly secretNames: readonly string[];
}

export interface CompiledMcpCall {
  readonly name: string;
  readonly actions: ReadonlySet<string>;
  readonly anyAction: boolean;
  readonly toolName: string;
  readonly arguments: ReadonlyArray<readonly [name: string, value: CompiledField]>;
  readonly saveResponse: boolean;
  readonly responseObjectName: string;
}

export interface CompiledMcpSet {
  readonly name: string | undefined;
  readonly url: string;
  readonly transport: McpTransport;
  readonly timeoutMs: number;
  readonly headers: ReadonlyArray<readonly [name: string, value: CompiledField]>;
  readonly calls: readonly CompiledMcpCall[];
  /** Whether the whitelist and the blacklist let a tool be used. */
  allows(tool: string): boolean;
}

function compileField(source: string, where: string): CompiledField {
  const secretNames: string[] = [];
  try {
    return { field: compileFieldTemplate(source, secretNames), secretNames };
  } catch (error) {
    if (error instanceof TemplateSyntaxError)
      throw new DeploymentError(`${where} is not a valid template: ${error.message}`);
    throw error;
  }
}

export function compileMcpSet(config: McpCallsConfiguration, reference: string): CompiledMcpSet {
  const whitelist = new Set(config.toolsWhitelist ?? []);
  const blacklist = new Set(config.toolsBlacklist ?? []);
  return {
    name: config.name?.trim() || undefined,
    url: config.mcpServerUrl.trim(),
    transport: config.transport ?? 'http',
    timeoutMs: config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
    headers: Object.entries(config.headers ?? {}).map(([name, value]) => [
      name,
      compileField(value, `The header '${name}' of the MCP-call set ${reference}`),
    ]),
    calls: (config.mcpCalls ?? []).map((call) => ({
      name: call.name,
      actions: new Set(call.actions),
      anyAction: call.actions.includes('*'),
      toolName: call.toolName,
      arguments: Object.entries(call.toolArguments ?? {}).map(([name, value]) => [
        name,
        compileField(value, `The argument '${name}' of the MCP call '${call.name}' in ${reference}`),
      ]),
      saveResponse: call.saveResponse ?? true,
      responseObjectName: call.responseObjectName?.trim() || call.name,
    })),
    allows: (tool) => (whitelist.size === 0 || whitelist.has(tool)) && !blacklist.has(tool),
  };
}

/** Renders a list of fields and resolves the vault references they were written with. */
export async function renderFields(
  fields: ReadonlyArray<readonly [string, CompiledField]>,
  data: Readonly<Record<string, unknown>>,
  resolver: SecretResolver,
  secrets: SecretValues,
): Promise<Record<string, string>> {
  const rendered: Record<string, string> = {};
  for (const [name, { field, secretNames }] of fields)
    rendered[name] = (await resolveSecrets(field.render(data), secretNames, resolver, secrets)).text;
  return rendered;
}

/** The server of a set as the MCP client needs it this turn (headers with their secrets). */
export async function targetOf(
  set: CompiledMcpSet,
  data: Readonly<Record<string, unknown>>,
  resolver: SecretResolver,
  secrets: SecretValues,
): Promise<McpServerTarget> {
  return {
    url: set.url,
    transport: set.transport,
    timeoutMs: set.timeoutMs,
    headers: await renderFields(set.headers, data, resolver, secrets),
  };
}

/** The tools of a set the model may use. */
export function usableTools(set: CompiledMcpSet, tools: readonly McpToolInfo[]): McpToolInfo[] {
  return tools.filter((tool) => set.allows(tool.name));
}
