import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** Tools of the loopback MCP server: `get-weather`, `forecast` and `delete-everything`. */
function toolServer(): McpServer {
  const server = new McpServer({ name: 'weather-tools', version: '1.0.0' });
  server.registerTool(
    'get-weather',
    { description: 'The weather in a city', inputSchema: { city: z.string().describe('the city') } },
    async ({ city }) => ({ content: [{ type: 'text', text: `Sunny in ${city}, 21 °C` }] }),
  );
  server.registerTool(
    'forecast',
    { description: 'Three days ahead', inputSchema: { city: z.string() } },
    async ({ city }) => ({
      content: [{ type: 'text', text: JSON.stringify({ city, days: ['sun', 'rain', 'sun'] }) }],
    }),
  );
  server.registerTool('delete-everything', { description: 'Dangerous', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'deleted' }],
  }));
  return server;
}

/** The SDK's server over both transports, recording the headers of every request. */
export class LoopbackMcpServer {
  readonly headers: IncomingHttpHeaders[] = [];
  readonly toolCalls: string[] = [];
  readonly #sse = new Map<string, SSEServerTransport>();
  readonly #server: Server;
  url = '';

  constructor() {
    this.#server = createServer(async (request, response) => {
      this.headers.push(request.headers);
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (path === '/mcp') {
        const body = await readJson(request);
        if (body?.method === 'tools/call') this.toolCalls.push(body.params.name);
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        response.on('close', () => transport.close());
        await toolServer().connect(transport);
        await transport.handleRequest(request, response, body);
      } else if (path === '/sse' && request.method === 'GET') {
        const transport = new SSEServerTransport('/messages', response);
        this.#sse.set(transport.sessionId, transport);
        response.on('close', () => this.#sse.delete(transport.sessionId));
        await toolServer().connect(transport);
      } else if (path === '/messages') {
        const transport = this.#sse.get(new URL(request.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '');
        const body = await readJson(request);
        if (body?.method === 'tools/call') this.toolCalls.push(body.params.name);
        if (transport) await transport.handlePostMessage(request, response, body);
        else response.writeHead(404).end();
      } else {
        response.writeHead(404).end();
      }
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

async function readJson(request: IncomingMessage): Promise<any> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}
