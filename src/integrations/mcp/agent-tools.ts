import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { AgentChat, ChatCaller } from '../a2a/agent-chat.ts';
import type { AgentDirectory, DeployedAgent } from '../a2a/agent-directory.ts';

/**
 * The MCP face of the deployed agents: `list_agents`, and one tool per agent deployed READY in production, named
 * `agent_<name>` (the descriptor name in lower case, other characters as `_`) or `agent_<id>` when the agent is
 * unnamed or its name is shared. An agent tool takes `{message, conversationId?}` and answers the agent's output
 * texts and the conversation id to pass back to continue the conversation.
 *
 * Each server is built for one caller and applies the REST routes' checks through the same services: it lists only
 * agents the caller sees, starts conversations as the caller (USE needed), and continues only the caller's own
 * conversations (another user's is unknown).
 */

const SERVER_INFO = { name: 'svc-agents', version: '0.1.0' };
const MAX_TOOL_NAME = 64;

function sanitizedName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Tool names for the agents: by name when it is set and unique among them, else by id. */
export function agentToolNames(agents: readonly DeployedAgent[]): Map<string, DeployedAgent> {
  const byName = new Map<string, number>();
  for (const agent of agents) {
    const name = sanitizedName(agent.name);
    byName.set(name, (byName.get(name) ?? 0) + 1);
  }
  const tools = new Map<string, DeployedAgent>();
  for (const agent of agents) {
    const name = sanitizedName(agent.name);
    const candidate = `agent_${name}`.slice(0, MAX_TOOL_NAME);
    const unique =
      name !== '' && byName.get(name) === 1 && !tools.has(candidate) && !agents.some((other) => other.id === name);
    tools.set(unique ? candidate : `agent_${agent.id}`, agent);
  }
  return tools;
}

const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

export class AgentTools {
  readonly #directory: AgentDirectory;
  readonly #chat: AgentChat;
  readonly #log: FastifyBaseLogger;

  constructor(options: { directory: AgentDirectory; chat: AgentChat; log: FastifyBaseLogger }) {
    this.#directory = options.directory;
    this.#chat = options.chat;
    this.#log = options.log;
  }

  /**
   * A server with the tools of the agents deployed right now that the caller sees (the HTTP transport is stateless:
   * one per request).
   */
  async createServer(caller: ChatCaller = {}): Promise<McpServer> {
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
    const tools = agentToolNames(await this.#directory.listDeployed(caller.access));
    const roster = [...tools].map(([tool, agent]) => ({
      tool,
      agentId: agent.id,
      name: agent.name,
      description: agent.description,
      version: agent.deployedVersion,
    }));

    server.registerTool(
      'list_agents',
      {
        title: 'List agents',
        description: 'The agents deployed in production, each with the tool that talks to it.',
        inputSchema: {},
      },
      async () => ({
        content: [{ type: 'text', text: JSON.stringify(roster) }],
        structuredContent: { agents: roster },
      }),
    );

    for (const [tool, agent] of tools) {
      server.registerTool(
        tool,
        {
          title: agent.name || `Agent ${agent.id}`,
          description:
            `Send a message to the agent ${agent.name ? `"${agent.name}"` : agent.id}${agent.description ? ` (${agent.description})` : ''}. ` +
            "Answers the agent's reply and a conversationId; pass the conversationId with the next message to continue the conversation.",
          inputSchema: {
            message: z.string().describe('the user message'),
            conversationId: z
              .string()
              .optional()
              .describe('continue this conversation (from an earlier answer); omit to start a new one'),
          },
          outputSchema: {
            conversationId: z.string(),
            conversationState: z.string(),
            output: z.array(z.string()),
          },
        },
        async ({ message, conversationId }) => this.#talk(agent.id, message, conversationId, caller),
      );
    }
    return server;
  }

  async #talk(
    agentId: string,
    message: string,
    conversationId: string | undefined,
    caller: ChatCaller,
  ): Promise<CallToolResult> {
    try {
      if (conversationId !== undefined) {
        const conversation = await this.#chat.describe(conversationId, caller);
        if (conversation.agentId !== agentId)
          return toolError(`Conversation ${conversationId} is not a conversation with this agent.`);
        if (conversation.state === 'ENDED')
          return toolError(
            `Conversation ${conversationId} has ended; omit conversationId to start a new conversation.`,
          );
      }
      const reply =
        conversationId === undefined
          ? await this.#chat.start(agentId, message, caller)
          : await this.#chat.continue(conversationId, message, caller);
      const text = reply.texts.join('\n');
      const result = { conversationId: reply.conversationId, conversationState: reply.state, output: [...reply.texts] };
      return {
        content: [{ type: 'text', text: text === '' ? '(the agent gave no text output)' : text }],
        structuredContent: result,
        ...(reply.state === 'ERROR' ? { isError: true } : {}),
      };
    } catch (error) {
      if (error instanceof AppError) return toolError(error.message);
      this.#log.error({ err: error, agentId }, 'an MCP agent tool failed unexpectedly');
      return toolError('Internal error while talking to the agent; the details are in the service log.');
    }
  }
}
