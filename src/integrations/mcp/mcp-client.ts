import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONSchema7 } from 'ai';
import { LRUCache } from 'lru-cache';
import type { Tracing } from '../../ops/tracing.ts';
import { linkedSignal } from '../../shared/abort.ts';

/**
 * Connections to outside MCP servers (MCP-call sets, `/mcpcallsstore/mcpcalls`) through the official SDK client:
 * Streamable HTTP or SSE over the service's guarded outbound fetch, with the set's headers (vault references
 * already resolved). A connection is kept for five minutes per server and headers, its tool list for one minute.
 */

export const MCP_TRANSPORTS = ['http', 'streamable-http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

export interface McpServerTarget {
  readonly url: string;
  readonly transport: McpTransport;
  /** Resolved header values (secrets included): they only go into the request and the cache key's digest. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

export interface McpToolInfo {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JSONSchema7;
}

interface Connection {
  readonly client: Client;
  tools?: { readonly list: readonly McpToolInfo[]; readonly until: number };
}

const TOOL_LIST_TTL_MS = 60_000;

export class McpClients {
  readonly #fetch: typeof globalThis.fetch;
  readonly #connections = new LRUCache<string, Promise<Connection>>({
    max: 200,
    ttl: 5 * 60_000,
    dispose: (connection) => {
      connection.then((open) => open.client.close()).catch(() => undefined);
    },
  });

  readonly #tracing: Tracing | undefined;

  /** With `tracing`, each tool list and tool call runs in a span of its own. */
  constructor(fetch: typeof globalThis.fetch, tracing?: Tracing) {
    this.#fetch = fetch;
    this.#tracing = tracing;
  }

  /** Runs `work` in a span `mcp <method>` when traces are on. */
  #traced<T>(method: string, target: McpServerTarget, tool: string | undefined, work: () => Promise<T>): Promise<T> {
    if (this.#tracing === undefined) return work();
    const attributes = {
      'mcp.method.name': method,
      'server.address': new URL(target.url).host,
      ...(tool === undefined ? {} : { 'gen_ai.tool.name': tool }),
    };
    return this.#tracing.inSpan(`mcp ${method}${tool === undefined ? '' : ` ${tool}`}`, attributes, work);
  }

  listTools(target: McpServerTarget, signal: AbortSignal): Promise<readonly McpToolInfo[]> {
    return this.#traced('tools/list', target, undefined, () => this.#listTools(target, signal));
  }

  async #listTools(target: McpServerTarget, signal: AbortSignal): Promise<readonly McpToolInfo[]> {
    const connection = await this.#connection(target);
    if (connection.tools && connection.tools.until > Date.now()) return connection.tools.list;
    const listed = await this.#retryOnce(target, (client) =>
      this.#withSignal(signal, target, (callSignal) =>
        client.listTools(undefined, { signal: callSignal, timeout: target.timeoutMs }),
      ),
    );
    const list = listed.tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      inputSchema: tool.inputSchema as JSONSchema7,
    }));
    connection.tools = { list, until: Date.now() + TOOL_LIST_TTL_MS };
    return list;
  }

  /** Calls a tool; answers its text content (JSON for structured content). Throws with the server's error text. */
  callTool(target: McpServerTarget, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    return this.#traced('tools/call', target, name, () => this.#callTool(target, name, args, signal));
  }

  async #callTool(
    target: McpServerTarget,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string> {
    const result = await this.#retryOnce(target, (client) =>
      this.#withSignal(signal, target, (callSignal) =>
        client.callTool({ name, arguments: args }, undefined, { signal: callSignal, timeout: target.timeoutMs }),
      ),
    );
    const content = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: string }>) : [];
    const text = content
      .filter((part) => part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('\n');
    const answer =
      text !== '' ? text : result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
    if (result.isError === true) throw new McpToolError(answer || `the tool '${name}' failed`);
    return answer;
  }

  /** Runs one request with a signal that follows the turn's and aborts after the server's time limit. */
  async #withSignal<T>(signal: AbortSignal, target: McpServerTarget, request: (signal: AbortSignal) => Promise<T>) {
    const call = linkedSignal([signal], target.timeoutMs);
    try {
      return await request(call.signal);
    } finally {
      call.release();
    }
  }

  /** Runs `use` on the server's connection; a connection the server dropped (a restart) is opened again once. */
  async #retryOnce<T>(target: McpServerTarget, use: (client: Client) => Promise<T>): Promise<T> {
    const first = await this.#connection(target);
    try {
      return await use(first.client);
    } catch (error) {
      if (error instanceof McpToolError || !isConnectionLost(error)) throw error;
      this.#connections.delete(keyOf(target));
      return use((await this.#connection(target)).client);
    }
  }

  #connection(target: McpServerTarget): Promise<Connection> {
    const key = keyOf(target);
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      connection = this.#connect(target);
      connection.catch(() => this.#connections.delete(key));
      this.#connections.set(key, connection);
    }
    return connection;
  }

  async #connect(target: McpServerTarget): Promise<Connection> {
    const url = new URL(target.url);
    const requestInit = { headers: { ...target.headers } };
    const transport =
      target.transport === 'sse'
        ? new SSEClientTransport(url, { fetch: this.#fetch, requestInit })
        : new StreamableHTTPClientTransport(url, { fetch: this.#fetch, requestInit });
    const client = new Client({ name: 'svc-mcp-client', version: '1.0.0' });
    await client.connect(transport, { timeout: target.timeoutMs });
    return { client };
  }

  async close(): Promise<void> {
    const open = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(open.map((connection) => connection.then((c) => c.client.close()).catch(() => undefined)));
  }
}

/** A tool that answered with `isError`: its text is for the model, not a connection problem. */
export class McpToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolError';
  }
}

function keyOf(target: McpServerTarget): string {
  return createHash('sha256')
    .update(JSON.stringify([target.url, target.transport, Object.entries(target.headers).sort()]))
    .digest('hex');
}

function isConnectionLost(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /session|not connected|404|closed/i.test(message);
}
