import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Outbound } from '../../security/outbound.ts';
import { isCredentialHeader } from './credentials.ts';

/**
 * The outbound HTTP client of HTTP calls, over the service's guarded dispatcher (`security/outbound.ts`: pooled
 * keep-alive connections per origin, a connect timeout, and connections only to addresses the URL guard accepts).
 * Adds an overall per-call timeout, a response size limit (the body is cut there and the connection dropped), and
 * redirects (each target checked by the URL guard first; credential headers dropped when a redirect leaves the
 * origin; never from https to http).
 */

export interface OutgoingRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** Header names (lower case) that must not follow a redirect to another origin (they carry secrets). */
  readonly sensitiveHeaders: ReadonlySet<string>;
}

export interface IncomingResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body was longer than the limit and was cut. */
  readonly truncated: boolean;
  /** Where the response finally came from (after redirects). */
  readonly url: URL;
}

export interface SendLimits {
  readonly timeoutMillis: number;
  readonly maxResponseBytes: number;
  readonly signal?: AbortSignal | undefined;
}

/** A request that got no response: refused, reset, timed out, blocked, too many redirects. */
export class TransportError extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.name = 'TransportError';
    this.code = code;
  }
}

const CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed by the other side',
  UND_ERR_CONNECT_TIMEOUT: 'the connection could not be made in time',
  ENOTFOUND: 'the host name could not be resolved',
  EAI_AGAIN: 'the host name could not be resolved (temporary failure)',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection was closed while sending',
  ETIMEDOUT: 'the connection timed out',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate does not match the host',
};

/** `host:port` of a target, for messages (never the user part or the path of the URL). */
function targetOf(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

function describe(error: unknown, url: URL): TransportError {
  if (error instanceof TransportError) return error;
  if (error instanceof Error && error.name === 'BlockedUrlError') return new TransportError(error.message, 'BLOCKED');
  const code = (error as { code?: unknown }).code;
  const target = targetOf(url);
  if (typeof code === 'string')
    return new TransportError(`${CAUSES[code] ?? `the request failed (${code})`} (${target})`, code);
  return new TransportError(
    `the request failed (${error instanceof Error ? error.name : 'unknown error'}) (${target})`,
    'EFAILED',
  );
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class HttpTransport {
  readonly #outbound: Outbound;
  readonly #maxRedirects: number;

  constructor(options: { outbound: Outbound; maxRedirects: number }) {
    this.#outbound = options.outbound;
    this.#maxRedirects = options.maxRedirects;
  }

  /** Sends `request`, following redirects; rejects with `TransportError` when no response arrives in time. */
  async send(request: OutgoingRequest, limits: SendLimits): Promise<IncomingResponse> {
    // The call's timeout and the turn's signal stop whichever exchange is running (redirects are one after the
    // other). Stopping the exchange directly costs no AbortSignal per call, no listener on it inside undici, and no
    // wait for a request still queued for a connection.
    let exchange: ResponseCollector | undefined;
    let stopped: unknown;
    let expired = false;
    const stop = (reason: unknown) => {
      if (stopped !== undefined) return;
      stopped = reason;
      exchange?.abort(reason);
    };
    const timer = setTimeout(() => {
      expired = true;
      stop(new DOMException('The call timed out.', 'TimeoutError'));
    }, limits.timeoutMillis);
    const interrupt = () => stop(limits.signal?.reason ?? new DOMException('The turn was interrupted.', 'AbortError'));
    if (limits.signal?.aborted) interrupt();
    else limits.signal?.addEventListener('abort', interrupt, { once: true });
    try {
      let current = request;
      for (let redirects = 0; ; redirects++) {
        let response: IncomingResponse;
        try {
          if (this.#outbound.guard.enabled) await this.#outbound.guard.check(current.url);
          if (stopped !== undefined) throw stopped;
          exchange = new ResponseCollector(current.url, limits.maxResponseBytes);
          this.#outbound.dispatcher.dispatch(dispatchOptions(current), exchange);
          response = await exchange.response;
        } catch (error) {
          if (limits.signal?.aborted) throw new TransportError('the turn was interrupted', 'EABORTED');
          if (expired)
            throw new TransportError(
              `no answer within ${limits.timeoutMillis} ms (${targetOf(current.url)})`,
              'ETIMEOUT',
            );
          throw describe(error, current.url);
        }
        const location = response.headers.location;
        if (!REDIRECTS.has(response.status) || typeof location !== 'string' || current.method === 'OPTIONS')
          return response;
        if (redirects >= this.#maxRedirects)
          throw new TransportError(`more than ${this.#maxRedirects} redirects`, 'EREDIRECTS');
        const next = redirected(current, response.status, location);
        if (next === undefined) return response;
        current = next;
      }
    } finally {
      clearTimeout(timer);
      limits.signal?.removeEventListener('abort', interrupt);
    }
  }
}

function dispatchOptions(request: OutgoingRequest): Dispatcher.DispatchOptions {
  return {
    origin: request.url.origin,
    path: `${request.url.pathname}${request.url.search}`,
    method: request.method as Dispatcher.HttpMethod,
    headers: request.headers,
    body: request.body,
  };
}

const errorOf = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

/** Signals, inside the collector, that the body reached the size limit; never leaves it. */
const CUT_AT_LIMIT = new Error('the response reached its size limit');

/**
 * The dispatch handler of one exchange: collects the status, the headers and at most `maxBytes` of the body
 * straight from undici's callbacks (no body stream, no async iteration). A longer body is cut there and its
 * connection dropped. `abort` ends the exchange at any point, also before undici has started it.
 */
class ResponseCollector implements Dispatcher.DispatchHandler {
  readonly response: Promise<IncomingResponse>;
  readonly #url: URL;
  readonly #maxBytes: number;
  #resolve!: (response: IncomingResponse) => void;
  #reject!: (error: unknown) => void;
  #settled = false;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(url: URL, maxBytes: number) {
    this.#url = url;
    this.#maxBytes = maxBytes;
    this.response = new Promise<IncomingResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  abort(reason: unknown): void {
    if (this.#settled) return;
    this.#abortReason = errorOf(reason);
    this.#fail(reason);
    this.#controller?.abort(this.#abortReason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#abortReason) controller.abort(this.#abortReason);
    else this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // informational: the final answer follows
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    const room = this.#maxBytes - this.#size;
    if (chunk.length > room) {
      this.#chunks.push(chunk.subarray(0, room));
      this.#size = this.#maxBytes;
      this.#finish(true);
      controller.abort(CUT_AT_LIMIT);
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    this.#finish(false);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error);
  }

  #finish(truncated: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
    this.#resolve({ status: this.#status, headers: this.#headers, body, truncated, url: this.#url });
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
  }
}

/** The request a redirect leads to, or undefined when it must not be followed. */
function redirected(request: OutgoingRequest, status: number, location: string): OutgoingRequest | undefined {
  let url: URL;
  try {
    url = new URL(location, request.url);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (request.url.protocol === 'https:' && url.protocol === 'http:') return undefined;
  const toGet =
    status === 303 ? request.method !== 'HEAD' : (status === 301 || status === 302) && request.method === 'POST';
  const sameOrigin = url.origin === request.url.origin;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (toGet && (lower === 'content-type' || lower === 'content-length')) continue;
    if (!sameOrigin && (isCredentialHeader(lower) || request.sensitiveHeaders.has(lower))) continue;
    headers[name] = value;
  }
  return {
    url,
    method: toGet ? 'GET' : request.method,
    headers,
    body: toGet ? undefined : request.body,
    sensitiveHeaders: request.sensitiveHeaders,
  };
}
