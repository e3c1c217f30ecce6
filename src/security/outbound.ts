import { isIP } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { apiFetch } from './api-fetch.ts';
import type { UrlGuard } from './url-guard.ts';

/**
 * The one outbound HTTP client of the service: an undici dispatcher whose connections are made only to addresses
 * the URL guard accepts. Names resolve through the guard's `lookup`; an IP-literal host (which is not looked up)
 * is checked by the guard before the socket is opened. So the guard holds at connect time for every request sent
 * through it, redirects and pooled origins included: HTTP calls, the built-in web tools and every LLM provider.
 */

/** Connections kept per origin at most; idle pooled connections are closed after `IDLE_SOCKET_MILLIS`. */
export const MAX_CONNECTIONS_PER_ORIGIN = 64;
/** Servers commonly drop idle connections after 5 s or more. */
const IDLE_SOCKET_MILLIS = 4_000;

export interface Outbound {
  readonly guard: UrlGuard;
  readonly dispatcher: Dispatcher;
  /** `fetch` over the guarded dispatcher (for clients that take a fetch function). */
  readonly fetch: typeof globalThis.fetch;
  /** The same for API clients (the AI SDK providers, MCP, A2A), cheaper per request (api-fetch.ts). */
  readonly apiFetch: typeof globalThis.fetch;
  /** Drops every connection, also those of requests still running (at shutdown). */
  close(): Promise<void>;
}

export function createOutbound(
  guard: UrlGuard,
  options: {
    connectTimeoutMillis: number;
    /** Wraps every request (tracing adds its span and `traceparent`). */
    interceptor?: Dispatcher.DispatcherComposeInterceptor | undefined;
  },
): Outbound {
  const connectChecked = buildConnector({ timeout: options.connectTimeoutMillis, lookup: guard.lookup });
  const connect: buildConnector.connector = (target, callback) => {
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    if (isIP(host) === 0) {
      connectChecked(target, callback);
      return;
    }
    const port = target.port === '' ? '' : `:${target.port}`;
    const literal = isIP(host) === 6 ? `[${host}]` : host;
    guard.check(new URL(`${target.protocol}//${literal}${port}`)).then(
      () => connectChecked(target, callback),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
  const agent = new Agent({
    connect,
    connections: MAX_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: IDLE_SOCKET_MILLIS,
  });
  const dispatcher = options.interceptor ? agent.compose(options.interceptor) : agent;
  const guardedFetch = ((input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) =>
    undiciFetch(input, { ...init, dispatcher })) as unknown as typeof globalThis.fetch;
  return { guard, dispatcher, fetch: guardedFetch, apiFetch: apiFetch(dispatcher), close: () => agent.destroy() };
}
