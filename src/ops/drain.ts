import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

/**
 * Graceful drain before a shutdown (SIGTERM): once `drain()` begins, the readiness check answers DOWN (the load
 * balancer stops sending), every new request but the health checks and metrics answers 503 with `Retry-After` and a
 * problem body, and every response closes its connection. `drain()` resolves once the requests that change
 * something (anything but GET, HEAD and OPTIONS) begun before it have answered and no turn is running or queued, or
 * when the time is up. Reads in flight are left to the server's close, which waits for them.
 */

/** What a refused request is told to wait before it tries again (another instance answers meanwhile). */
export const DRAIN_RETRY_AFTER_SECONDS = 5;
const POLL_MILLIS = 20;
const UNCOUNTED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function exempt(url: string): boolean {
  return url.startsWith('/q/health/') || url === '/q/metrics' || url.startsWith('/q/metrics?');
}

export class Drain {
  /** Turns running or queued on this instance (the conversation coordinator's count). */
  readonly #activeTurns: () => number;
  readonly #counted = new WeakSet<FastifyRequest>();
  #inFlight = 0;
  #draining = false;

  constructor(activeTurns: () => number) {
    this.#activeTurns = activeTurns;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Adds the hooks; register before the routes (and before authentication, so refusals come first). */
  register(app: FastifyInstance): void {
    app.addHook('onRequest', async (request, reply) => {
      if (this.#draining && !exempt(request.url)) {
        reply.header('connection', 'close');
        throw new AppError(
          'unavailable',
          'The service is shutting down; send the request again (to another instance).',
          {
            retryAfterSeconds: DRAIN_RETRY_AFTER_SECONDS,
          },
        );
      }
      if (!UNCOUNTED_METHODS.has(request.method)) {
        this.#counted.add(request);
        this.#inFlight++;
      }
    });
    const done = async (request: FastifyRequest) => {
      if (this.#counted.delete(request)) this.#inFlight--;
    };
    app.addHook('onResponse', done);
    app.addHook('onRequestAbort', done);
    app.addHook('onSend', async (_request, reply, payload) => {
      if (this.#draining) reply.header('connection', 'close');
      return payload;
    });
  }

  /**
   * Begins the drain (at once, before the first await) and waits for the counted requests and the turns, at most
   * `timeoutMillis`; answers whether they all finished.
   */
  async drain(timeoutMillis: number): Promise<boolean> {
    this.#draining = true;
    const deadline = performance.now() + timeoutMillis;
    while (this.#inFlight > 0 || this.#activeTurns() > 0) {
      if (performance.now() >= deadline) return false;
      await sleep(POLL_MILLIS);
    }
    return true;
  }

  /** What is still running (for the log line of a drain that ran out of time). */
  get pending(): { requests: number; turns: number } {
    return { requests: this.#inFlight, turns: this.#activeTurns() };
  }
}
