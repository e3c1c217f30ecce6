import { Type, type Static } from '@sinclair/typebox';
import { MCP_TRANSPORTS } from '../../integrations/mcp/mcp-client.ts';
import { isRecord } from '../../shared/json.ts';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { arrayField, closed, fieldPath, indexPath, stringEnum, stringMap, StringList } from './common.ts';

const McpCallSchema = closed(
  {
    name: Type.String({ description: 'Name of the call, unique in the set.' }),
    description: Type.Optional(Type.String({ description: 'What the call does.' })),
    actions: StringList("Actions that trigger the call ('*' = any action)."),
    toolName: Type.String({ description: "The MCP tool to call (as the server's tools/list names it)." }),
    toolArguments: Type.Optional(
      stringMap('Arguments of the tool, each a template rendered per turn ({memory.current.input}, ...).'),
    ),
    saveResponse: Type.Optional(Type.Boolean({ description: 'Store the result (default true).' })),
    responseObjectName: Type.Optional(
      Type.String({
        description: 'Stored as mcpCalls:<name> and memory.current.mcpCalls.<name> (default: the call name).',
      }),
    ),
  },
  { description: 'A tool call made when one of its actions occurs (no model involved).' },
);

export const McpCallsSchema = closed(
  {
    mcpServerUrl: Type.String({
      description: 'URL of the MCP server (http or https), e.g. https://tools.example.com/mcp.',
    }),
    name: Type.Optional(Type.String({ description: 'Name of the server; prefixes the tool names the model sees.' })),
    transport: Type.Optional(
      stringEnum(MCP_TRANSPORTS, 'http / streamable-http (Streamable HTTP, default) or sse (the older HTTP+SSE).'),
    ),
    headers: Type.Optional(stringMap('Request headers; a value ${vault:NAME} is read from the vault per turn.')),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Timeout of one MCP request (default 30000).' })),
    toolsWhitelist: Type.Optional(StringList('Only these tools are used (default all).')),
    toolsBlacklist: Type.Optional(StringList('These tools are never used (applied after the whitelist).')),
    mcpCalls: Type.Optional(Type.Array(McpCallSchema, { description: 'Calls triggered by actions.' })),
  },
  {
    title: 'McpCallsConfiguration',
    description:
      'An MCP server: its tools become tools of the LLM tasks of the same workflow (enableMcpCallTools), and mcpCalls call them on actions.',
  },
);
export type McpCallsConfiguration = Static<typeof McpCallsSchema>;

function checkSemantics(body: unknown): SemanticProblem[] {
  if (!isRecord(body)) return [];
  const problems: SemanticProblem[] = [];
  if (typeof body.mcpServerUrl === 'string' && !/^https?:\/\/[^/\s]+/i.test(body.mcpServerUrl.trim()))
    problems.push({
      path: '$.mcpServerUrl',
      message: 'The mcpServerUrl at $.mcpServerUrl must be an http or https URL.',
    });
  const seen = new Set<string>();
  arrayField(body, 'mcpCalls').forEach((call, i) => {
    const path = indexPath('$.mcpCalls', i);
    if (typeof call.name === 'string') {
      if (seen.has(call.name))
        problems.push({
          path: fieldPath(path, 'name'),
          message: `The MCP call name '${call.name}' at ${path} is used twice.`,
        });
      seen.add(call.name);
    }
    const whitelist = Array.isArray(body.toolsWhitelist) ? body.toolsWhitelist : [];
    const blacklist = Array.isArray(body.toolsBlacklist) ? body.toolsBlacklist : [];
    if (
      typeof call.toolName === 'string' &&
      ((whitelist.length > 0 && !whitelist.includes(call.toolName)) || blacklist.includes(call.toolName))
    )
      problems.push({
        path: fieldPath(path, 'toolName'),
        message: `The tool '${call.toolName}' at ${path} is excluded by toolsWhitelist or toolsBlacklist.`,
      });
  });
  return problems;
}

export const mcpCallsKind: ResourceKindDefinition = {
  ...kindNamed('mcpcalls'),
  schema: McpCallsSchema,
  renameAliases: (body) => body,
  checkSemantics,
};
