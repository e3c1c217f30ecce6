/**
 * The small typed HTTP client every screen uses. It attaches a bearer token when one is set (authentication on),
 * turns problem+json answers into ApiError, and reports a 401: the handler may refresh the token and have the
 * request sent once more, or show the sign-in screen.
 * No DOM: it runs in Node too.
 */

export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  /** JSON path of the offending field for strict-parse 400s, e.g. `$.a[0].b`. */
  readonly path?: string;
  readonly field?: string;
  readonly [member: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

export interface ApiResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly data: T;
}

export interface RequestOptions {
  readonly query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body. */
  readonly json?: unknown;
  /** A raw body (a ZIP upload, plain text) with its content type. */
  readonly body?: BodyInit;
  readonly contentType?: string;
  /** How to read the answer: JSON (default; text when not JSON), text, or a Blob. */
  readonly as?: 'json' | 'text' | 'blob';
  readonly signal?: AbortSignal;
}

export interface ApiClientOptions {
  /** Prefix for every path ('' in the browser: same origin). */
  readonly baseUrl?: string;
  /** The current access token, if any (may first refresh a token about to expire). */
  readonly getToken?: () => string | undefined | Promise<string | undefined>;
  /**
   * Called on every 401 answer with the token that was sent. While `canRetry`, answering true sends the request
   * once more (the handler got a new token); anything else (false, or no answer) gives up on the request.
   */
  readonly onUnauthorized?: (
    sentToken: string | undefined,
    canRetry: boolean,
  ) => boolean | undefined | Promise<boolean | undefined>;
  readonly fetch?: typeof fetch;
}

export interface ApiClient {
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  get<T = unknown>(path: string, options?: RequestOptions): Promise<T>;
  /** A raw fetch with the same authentication (streams); GET unless a method is given. */
  stream(path: string, options?: RequestOptions, method?: string): Promise<Response>;
}

export function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

export function createApiClient(options: ApiClientOptions = {}): ApiClient {
  const base = options.baseUrl ?? '';
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));

  const send = async (method: string, path: string, o: RequestOptions, retried = false): Promise<Response> => {
    const headers: Record<string, string> = {
      accept: o.as === 'blob' ? '*/*' : 'application/json, application/problem+json, text/plain;q=0.9, */*;q=0.5',
    };
    const token = await options.getToken?.();
    if (token) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (o.body !== undefined) {
      body = o.body;
      if (o.contentType) headers['content-type'] = o.contentType;
    }
    let response: Response;
    try {
      response = await doFetch(base + withQuery(path, o.query), { method, headers, body, signal: o.signal });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(0, {
        title: t('client.networkError'),
        detail: t('client.theServiceCouldNot', { message: (error as Error).message }),
      });
    }
    if (response.status === 401 && options.onUnauthorized) {
      const retry = await options.onUnauthorized(token, !retried && !(o.body instanceof ReadableStream));
      if (retry === true && !retried) {
        await response.body?.cancel().catch(() => undefined);
        return send(method, path, o, true);
      }
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let problem: Problem;
      try {
        const parsed: unknown = JSON.parse(text);
        problem = typeof parsed === 'object' && parsed !== null ? (parsed as Problem) : { detail: text };
      } catch {
        problem = {
          title: response.statusText,
          detail: text || `${method} ${path} answered ${response.status} ${response.statusText}.`,
        };
      }
      throw new ApiError(response.status, { status: response.status, ...problem });
    }
    return response;
  };

  const request = async <T>(method: string, path: string, o: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const response = await send(method, path, o);
    let data: unknown;
    if (o.as === 'blob') data = await response.blob();
    else {
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      data = o.as !== 'text' && text !== '' && /json/.test(type) ? JSON.parse(text) : text;
    }
    return { status: response.status, headers: response.headers, data: data as T };
  };

  return {
    request,
    get: async <T>(path: string, o?: RequestOptions) => (await request<T>('GET', path, o)).data,
    stream: (path: string, o: RequestOptions = {}, method = 'GET') => send(method, path, { ...o, as: 'text' }),
  };
}
import { t } from '../i18n/index.ts';
