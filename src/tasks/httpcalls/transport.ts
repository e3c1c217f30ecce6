import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { UrlGuard } from '../../security/url-guard.ts';
import { isCredentialHeader } from './credentials.ts';

/**
 * The outbound HTTP client of HTTP calls: `node:http`/`node:https` with keep-alive agents (connections are pooled
 * per origin, at most `MAX_SOCKETS_PER_ORIGIN` at a time), a connect timeout, an overall per-call timeout, a
 * response size limit (the body is cut there and the connection dropped), and redirects (each target checked by
 * the URL guard; credential headers dropped when a redirect leaves the origin; never from https to http).
 * Sockets resolve names through the guard's `lookup`, so they connect only to checked addresses.
 */

export const MAX_SOCKETS_PER_ORIGIN = 64;
const MAX_FREE_SOCKETS_PER_ORIGIN = 16;
/** Idle pooled connections are closed after this (servers commonly drop them after 5 s or more). */
const IDLE_SOCKET_MILLIS = 4_000;

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

function describe(error: unknown): TransportError {
  if (error instanceof TransportError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return new TransportError(CAUSES[code] ?? `the request failed (${code})`, code);
  if (error instanceof Error && error.name === 'BlockedUrlError') return new TransportError(error.message, 'BLOCKED');
  return new TransportError(`the request failed (${error instanceof Error ? error.name : 'unknown error'})`, 'EFAILED');
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class HttpTransport {
  readonly #guard: UrlGuard;
  readonly #connectTimeoutMillis: number;
  readonly #maxRedirects: number;
  readonly #http = new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN, maxFreeSockets: MAX_FREE_SOCKETS_PER_ORIGIN, timeout: IDLE_SOCKET_MILLIS });
  readonly #https = new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN, maxFreeSockets: MAX_FREE_SOCKETS_PER_ORIGIN, timeout: IDLE_SOCKET_MILLIS });

  constructor(options: { urlGuard: UrlGuard; connectTimeoutMillis: number; maxRedirects: number }) {
    this.#guard = options.urlGuard;
    this.#connectTimeoutMillis = options.connectTimeoutMillis;
    this.#maxRedirects = options.maxRedirects;
  }

  /** Sends `request`, following redirects; rejects with `TransportError` when no response arrives in time. */
  async send(request: OutgoingRequest, limits: SendLimits): Promise<IncomingResponse> {
    const deadline = Date.now() + limits.timeoutMillis;
    let current = request;
    for (let redirects = 0; ; redirects++) {
      try {
        await this.#guard.check(current.url);
      } catch (error) {
        throw describe(error);
      }
      const response = await this.#sendOnce(current, deadline, limits, true);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.status) || typeof location !== 'string' || current.method === 'OPTIONS') return response;
      if (redirects >= this.#maxRedirects) throw new TransportError(`more than ${this.#maxRedirects} redirects`, 'EREDIRECTS');
      const next = redirected(current, response.status, location);
      if (next === undefined) return response;
      current = next;
    }
  }

  /** Closes the pooled connections. */
  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }

  #sendOnce(request: OutgoingRequest, deadline: number, limits: SendLimits, mayRetryReused: boolean): Promise<IncomingResponse> {
    return new Promise<IncomingResponse>((resolve, reject) => {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        reject(new TransportError(`no answer within ${limits.timeoutMillis} ms`, 'ETIMEOUT'));
        return;
      }
      const https = request.url.protocol === 'https:';
      const headers: Record<string, string> = { ...request.headers };
      if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
      const outgoing = (https ? httpsRequest : httpRequest)(request.url, {
        method: request.method,
        headers,
        agent: https ? this.#https : this.#http,
        lookup: this.#guard.lookup,
      });
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
        clearTimeout(connectTimer);
        limits.signal?.removeEventListener('abort', onAbort);
      };
      const fail = (error: unknown) => {
        if (settled) return;
        finish();
        outgoing.destroy();
        // A pooled connection the server closed while it was idle: send once more on a fresh one.
        if (mayRetryReused && outgoing.reusedSocket && (error as { code?: unknown }).code === 'ECONNRESET') {
          this.#sendOnce(request, deadline, limits, false).then(resolve, reject);
          return;
        }
        reject(describe(error));
      };
      const timer = setTimeout(() => fail(new TransportError(`no answer within ${limits.timeoutMillis} ms`, 'ETIMEOUT')), remaining);
      const onAbort = () => fail(new TransportError('the turn was interrupted', 'EABORTED'));
      if (limits.signal?.aborted) {
        onAbort();
        return;
      }
      limits.signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.on('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => fail(new TransportError(`could not connect within ${this.#connectTimeoutMillis} ms`, 'ECONNECTTIMEOUT')), this.#connectTimeoutMillis);
        socket.once('connect', () => clearTimeout(connectTimer));
      });
      outgoing.on('error', fail);
      outgoing.on('response', (response: IncomingMessage) => {
        readBody(response, limits.maxResponseBytes, (read) => {
          if (settled) return;
          finish();
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: read.body, truncated: read.truncated, url: request.url });
        }, fail);
      });
      outgoing.end(request.body);
    });
  }
}

/**
 * Reads at most `maxBytes` of the body; a longer body is cut and its connection dropped. `done` is called
 * before the connection is dropped, so the errors that follow are ignored.
 */
function readBody(
  response: IncomingMessage,
  maxBytes: number,
  done: (read: { body: Buffer; truncated: boolean }) => void,
  fail: (error: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    if (size + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size));
      response.off('data', onData);
      done({ body: Buffer.concat(chunks), truncated: true });
      response.destroy();
      return;
    }
    size += chunk.length;
    chunks.push(chunk);
  };
  response.on('data', onData);
  response.on('end', () => done({ body: Buffer.concat(chunks), truncated: false }));
  response.on('error', fail);
  response.on('aborted', () => fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
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
  const toGet = status === 303 ? request.method !== 'HEAD' : (status === 301 || status === 302) && request.method === 'POST';
  const sameOrigin = url.origin === request.url.origin;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (toGet && (lower === 'content-type' || lower === 'content-length')) continue;
    if (!sameOrigin && (isCredentialHeader(lower) || request.sensitiveHeaders.has(lower))) continue;
    headers[name] = value;
  }
  return { url, method: toGet ? 'GET' : request.method, headers, body: toGet ? undefined : request.body, sensitiveHeaders: request.sensitiveHeaders };
}
