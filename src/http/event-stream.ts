import type { Writable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * Server-sent events over one response, for every stream of the service (conversation turns, the log stream).
 *
 * - Events are written in order; while the socket's buffer is full, further events wait in a queue until
 *   `drain`, so a client that reads slowly never makes the process buffer without bound: past `maxQueuedBytes`
 *   events are dropped (the log stream), without it every event waits (a turn's events are bounded by the turn).
 * - A comment line is sent every `heartbeatMs`, so proxies and clients do not take a quiet stream for a dead one.
 * - `signal` aborts when the stream is over: the client went away, or `close()` was called. The work that feeds
 *   the stream listens to it.
 */

export interface EventStreamOptions {
  /** Interval of `: heartbeat` comments; default 15 s. */
  readonly heartbeatMs?: number;
  /** Queued bytes beyond which events are dropped instead of queued; default: never dropped. */
  readonly maxQueuedBytes?: number;
}

export const DEFAULT_HEARTBEAT_MS = 15_000;

interface Queued {
  readonly chunk: string;
  readonly taken: (sent: boolean) => void;
}

export class EventStream {
  readonly #out: Writable;
  readonly #maxQueuedBytes: number;
  readonly #closed = new AbortController();
  readonly #heartbeat: NodeJS.Timeout;
  #queue: Queued[] = [];
  #queuedBytes = 0;
  #waitingForDrain = false;

  constructor(out: Writable, options: EventStreamOptions = {}) {
    this.#out = out;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? Number.POSITIVE_INFINITY;
    out.on('drain', () => this.#flush());
    out.on('close', () => this.#stop());
    out.on('error', () => this.#stop());
    this.#heartbeat = setInterval(() => {
      if (!this.#waitingForDrain) this.#write(': heartbeat\n\n');
    }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Aborted once the stream is over (client gone or `close()`): stop producing events. */
  get signal(): AbortSignal {
    return this.#closed.signal;
  }

  /**
   * Sends one event (`data` as JSON, on one line). Resolves true once the socket took it (after `drain` when its
   * buffer was full), false when it was dropped or the stream is over. Producers that can wait await it.
   */
  send(data: unknown, event?: string): Promise<boolean> {
    return this.#enqueue(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends one event whose data is `text` as it is (one line), e.g. the `[DONE]` that ends an OpenAI stream. */
  sendData(text: string): Promise<boolean> {
    return this.#enqueue(`data: ${text}\n\n`);
  }

  #enqueue(chunk: string): Promise<boolean> {
    if (this.#closed.signal.aborted) return Promise.resolve(false);
    if (!this.#waitingForDrain) {
      this.#write(chunk);
      return Promise.resolve(true);
    }
    if (this.#queuedBytes >= this.#maxQueuedBytes) return Promise.resolve(false);
    return new Promise((taken) => {
      this.#queue.push({ chunk, taken });
      this.#queuedBytes += chunk.length;
    });
  }

  /** Ends the stream; events still queued are handed to the socket first. */
  close(): void {
    if (this.#closed.signal.aborted) return;
    const queued = this.#takeQueue();
    for (const { chunk } of queued) this.#out.write(chunk);
    this.#stop();
    this.#out.end();
    for (const { taken } of queued) taken(true);
  }

  #write(chunk: string): void {
    if (!this.#out.write(chunk)) this.#waitingForDrain = true;
  }

  #flush(): void {
    this.#waitingForDrain = false;
    while (this.#queue.length > 0 && !this.#waitingForDrain && !this.#closed.signal.aborted) {
      const next = this.#queue.shift()!;
      this.#queuedBytes -= next.chunk.length;
      this.#write(next.chunk);
      next.taken(true);
    }
  }

  #takeQueue(): Queued[] {
    const queued = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    return queued;
  }

  #stop(): void {
    if (this.#closed.signal.aborted) return;
    clearInterval(this.#heartbeat);
    this.#closed.abort();
    for (const { taken } of this.#takeQueue()) taken(false);
  }
}

/**
 * Takes the response over from Fastify and opens an event stream on it. Headers that hooks already set on the
 * reply (CORS, request id, ...) are carried over, since a hijacked reply skips Fastify's own header writing.
 */
export function openEventStream(reply: FastifyReply, options: EventStreamOptions = {}): EventStream {
  reply.hijack();
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = value;
  }
  reply.raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  reply.raw.flushHeaders();
  return new EventStream(reply.raw, options);
}
