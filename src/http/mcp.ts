import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply } from 'fastify';
import type { AgentTools } from '../integrations/mcp/agent-tools.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The MCP server at `/mcp` (Streamable HTTP, stateless: every POST gets a fresh server listing the agents deployed
 * at that moment, answers are plain JSON). GET and DELETE answer 405: there are no sessions and no server-sent
 * stream. A body that is not JSON answers 400 with a JSON-RPC parse error, as the SDK's transport does. The tools
 * act as the caller, with the checks of the REST routes (see `AgentTools`).
 */

const tags = ['mcp'];

function sendJsonRpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return reply
    .code(status)
    .headers(headers)
    .type('application/json')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export async function mcpRoutes(app: TypedApp, deps: { tools: AgentTools }): Promise<void> {
  // The body is read as text and parsed here, so that malformed JSON is a JSON-RPC error, not a problem document.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.post(
    '/mcp',
    {
      config: { access: { roles: 'converse', rule: 'agents the caller may USE; own conversations only' } },
      schema: {
        tags,
        summary:
          'MCP (Streamable HTTP, stateless): list_agents and one agent_<name> tool per deployed production agent',
        response: { 200: { type: 'object', additionalProperties: true } },
      },
    },
    async (request, reply) => {
      let parsedBody: unknown;
      try {
        parsedBody = JSON.parse(typeof request.body === 'string' ? request.body : '');
      } catch {
        return sendJsonRpcError(reply, 400, -32700, 'Parse error: Invalid JSON');
      }
      const server = await deps.tools.createServer({ access: request.caller, identity: request.callerIdentity });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, parsedBody);
      } catch (error) {
        request.log.error({ err: error }, 'the MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }),
          );
        }
      }
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      config: { access: { roles: 'converse' } },
      method,
      url: '/mcp',
      schema: { tags, summary: 'Not offered: the MCP endpoint is stateless (no sessions, no server-sent stream); 405' },
      handler: async (_request, reply) =>
        sendJsonRpcError(reply, 405, -32000, 'Method not allowed: this MCP endpoint is stateless; use POST.', {
          Allow: 'POST',
        }),
    });
  }
}
