import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted loopback HTTP server for provider wire protocols. Each request takes the next scripted reply from
 * the queue (a request with an empty queue gets a 500 that says so) and is recorded with its headers and body.
 */

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  readonly body: any;
  readonly rawBody: string;
}

/** What a scripted model turn says: a text, tool calls, or a failure with a status code. */
export type Reply =
  | { readonly text: string; readonly usage?: Usage }
  | { readonly toolCalls: readonly ScriptedToolCall[]; readonly usage?: Usage }
  | { readonly status: number; readonly message?: string };

/** A reply, or how the provider fails to give one. */
export type Script =
  | Reply
  /** Never answers (until the client gives up or the server closes): for abort and timeout tests. */
  | { readonly hang: true }
  /** Answers `reply` after `delayMs` (a slow provider). */
  | { readonly delayMs: number; readonly reply: Script }
  /**
   * Starts answering `reply`, then breaks the connection: sends its first `chunks` chunks (a streamed answer's
   * events; a JSON answer is one chunk) and half of the next one, then destroys the socket.
   */
  | { readonly breakAfterChunks: number; readonly reply: Reply };

/** A reply decided when the request arrives (e.g. a model that repeats what it was sent). */
export type ScriptOf = (request: RecordedRequest) => Script;

export interface ScriptedToolCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly id?: string;
}

export interface Usage {
  readonly input: number;
  readonly output: number;
}

export const defaultUsage: Usage = { input: 11, output: 7 };

export interface HttpReply {
  readonly status: number;
  readonly contentType: string;
  /** Whole body, or the chunks written one after the other (streaming). */
  readonly chunks: readonly string[];
}

/** Turns a scripted reply into the provider's wire form for the given request. */
export type Encoder = (script: Reply, request: RecordedRequest) => HttpReply;

export function jsonReply(status: number, body: unknown): HttpReply {
  return { status, contentType: 'application/json', chunks: [JSON.stringify(body)] };
}

export function sseReply(events: ReadonlyArray<{ event?: string; data: unknown }>): HttpReply {
  const chunks = events.map(
    ({ event, data }) =>
      `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
  );
  return { status: 200, contentType: 'text/event-stream', chunks };
}

export function ndjsonReply(lines: readonly unknown[]): HttpReply {
  return { status: 200, contentType: 'application/x-ndjson', chunks: lines.map((line) => `${JSON.stringify(line)}\n`) };
}

/** Splits a text into a few deltas, so streaming clients see more than one token. */
export function deltas(text: string): string[] {
  const words = text.split(/(?<= )/);
  return words.length > 0 ? words : [text];
}

export class FakeProvider {
  readonly requests: RecordedRequest[] = [];
  readonly #queue: Array<Script | ScriptOf> = [];
  readonly #waiting: Array<(request: RecordedRequest) => void> = [];
  readonly #server: Server;
  #url = '';

  constructor(encode: Encoder) {
    this.#server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const rawBody = Buffer.concat(parts).toString('utf8');
        let body: unknown;
        try {
          body = rawBody === '' ? undefined : JSON.parse(rawBody);
        } catch {
          body = undefined;
        }
        const recorded: RecordedRequest = {
          method: request.method ?? 'GET',
          path: request.url ?? '/',
          headers: request.headers,
          body,
          rawBody,
        };
        this.requests.push(recorded);
        for (const resolve of this.#waiting.splice(0)) resolve(recorded);
        const next = this.#queue.shift();
        const script = typeof next === 'function' ? next(recorded) : next;
        const answer = (script: Script | undefined) => {
          if (script && 'hang' in script) return;
          if (script && 'delayMs' in script) {
            const timer = setTimeout(() => answer(script.reply), script.delayMs);
            response.on('close', () => clearTimeout(timer));
            return;
          }
          const breakAfter = script && 'breakAfterChunks' in script ? script.breakAfterChunks : undefined;
          const reply =
            script === undefined
              ? jsonReply(500, { error: { message: 'no scripted reply left in the fake provider' } })
              : encode('breakAfterChunks' in script ? script.reply : script, recorded);
          response.writeHead(reply.status, { 'content-type': reply.contentType });
          if (breakAfter === undefined) {
            for (const chunk of reply.chunks) response.write(chunk);
            response.end();
            return;
          }
          for (const chunk of reply.chunks.slice(0, breakAfter)) response.write(chunk);
          const half = reply.chunks[breakAfter] ?? '';
          response.write(half.slice(0, Math.floor(half.length / 2)), () => response.destroy());
        };
        answer(script);
      });
    });
  }

  /** The server's base URL, e.g. `http://127.0.0.1:40123`. */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Queues the replies of the next requests, in order. */
  reply(...scripts: Array<Script | ScriptOf>): this {
    this.#queue.push(...scripts);
    return this;
  }

  /** Resolves with the next request that arrives. */
  nextRequest(): Promise<RecordedRequest> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Forgets recorded requests and queued replies. */
  reset(): void {
    this.requests.length = 0;
    this.#queue.length = 0;
  }

  get pending(): number {
    return this.#queue.length;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
