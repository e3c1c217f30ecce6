import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { type Dispatcher, fetch as undiciFetch, interceptors, Response } from 'undici';

/**
 * `fetch` for the API clients (LLM and embedding providers, MCP, A2A): an http(s) request with a text or byte body
 * (or none) and no options beyond method, headers, body and signal goes straight to the dispatcher's `request` and
 * is answered with a `Response` around its body; any other request goes through undici's `fetch`. The WHATWG
 * fetch algorithm costs about twice the CPU of the request itself, and every LLM turn makes such a request.
 *
 * What a client sees stays fetch's: fetch's default headers, redirects followed (20 at most), compressed answers
 * decoded, a network failure rejected as `TypeError('fetch failed')` caused by undici's error, an abort rejected
 * with the signal's reason, a body cut off midway erroring its stream with undici's socket error. One difference on
 * the wire: unless the caller asks for an encoding, the request asks for none (`accept-encoding: identity`), so
 * that answers need no decoding; one encoded all the same is decoded.
 */

const MAX_REDIRECTIONS = 20;
const PLAIN_OPTIONS: ReadonlySet<string> = new Set(['method', 'headers', 'body', 'signal']);
const STANDARD_METHODS: ReadonlySet<string> = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
/** Statuses whose `Response` has no body. */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

type FetchInput = Parameters<typeof undiciFetch>[0];
type FetchInit = NonNullable<Parameters<typeof undiciFetch>[1]>;

export function apiFetch(dispatcher: Dispatcher): typeof globalThis.fetch {
  const direct = dispatcher.compose(
    interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS, throwOnMaxRedirect: true }),
  );
  const viaFetch = (input: FetchInput, init?: FetchInit) => undiciFetch(input, { ...init, dispatcher });
  return (async (input: FetchInput, init?: FetchInit) => {
    const target = typeof input === 'string' ? URL.parse(input) : input instanceof URL ? input : null;
    if (target === null || (target.protocol !== 'http:' && target.protocol !== 'https:') || !isPlain(init))
      return viaFetch(input, init);
    const signal = init?.signal ?? undefined;
    const method = normalizedMethod(init?.method);
    // fetch refuses a body on GET and HEAD: let it say so.
    if ((method === 'GET' || method === 'HEAD') && init?.body != null) return viaFetch(input, init);
    let answer: Dispatcher.ResponseData;
    try {
      answer = await direct.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: method as Dispatcher.HttpMethod,
        headers: requestHeaders(init),
        body: init?.body as string | Uint8Array | null | undefined,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new TypeError('fetch failed', { cause: error });
    }
    const hasBody = method !== 'HEAD' && !NULL_BODY_STATUSES.has(answer.statusCode);
    if (!hasBody) answer.body.dump().catch(() => undefined);
    const body = hasBody ? chunksOf(decoded(answer.body, answer.headers['content-encoding']), signal) : null;
    return new Response(body, {
      status: answer.statusCode,
      statusText: answer.statusText,
      headers: responseHeaders(answer.headers),
    });
  }) as unknown as typeof globalThis.fetch;
}

/** fetch upper-cases the standard methods only. */
function normalizedMethod(method: string | undefined): string {
  if (method === undefined) return 'GET';
  const upper = method.toUpperCase();
  return STANDARD_METHODS.has(upper) ? upper : method;
}

/** No options beyond the common ones, a text or byte body. */
function isPlain(init: FetchInit | undefined): boolean {
  if (init === undefined) return true;
  for (const [key, value] of Object.entries(init)) if (value !== undefined && !PLAIN_OPTIONS.has(key)) return false;
  const body = init.body;
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
}

/** The caller's headers (names in lower case) and those fetch adds when they are not set. */
function requestHeaders(init: FetchInit | undefined): Record<string, string> {
  const given = init?.headers;
  const headers: Record<string, string> = {};
  if (typeof given === 'object' && Object.getPrototypeOf(given) === Object.prototype) {
    // The AI SDK's providers send a plain object of valid headers: no `Headers` to build.
    for (const [name, value] of Object.entries(given as Record<string, string>))
      headers[name.toLowerCase()] = String(value);
  } else
    new Headers(given as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => {
      headers[name] = value;
    });
  headers.accept ??= '*/*';
  headers['accept-language'] ??= '*';
  headers['sec-fetch-mode'] ??= 'cors';
  headers['user-agent'] ??= 'undici';
  headers['accept-encoding'] ??= 'identity';
  if (typeof init?.body === 'string') headers['content-type'] ??= 'text/plain;charset=UTF-8';
  return headers;
}

function responseHeaders(headers: Dispatcher.ResponseData['headers']): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const one of value) pairs.push([name, one]);
    else if (value !== undefined) pairs.push([name, value]);
  }
  return pairs;
}

/** The body's chunks; a failure midway is fetch's `TypeError('terminated')` caused by it, unless the signal aborted. */
async function* chunksOf(body: Readable, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  try {
    yield* body;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new TypeError('terminated', { cause: error });
  }
}

/** The body decoded as fetch decodes it (the codings in reverse order); an unknown coding leaves it as it is. */
function decoded(body: Readable, contentEncoding: string | string[] | undefined): Readable {
  const codings = [contentEncoding ?? []]
    .flat()
    .join(',')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim());
  if (codings.every((coding) => coding === '' || coding === 'identity')) return body;
  const decoders: NodeJS.ReadWriteStream[] = [];
  for (const coding of codings.reverse()) {
    const decoder = decoderOf(coding);
    if (decoder === undefined) return body;
    decoders.push(decoder);
  }
  return pipeline([body, ...decoders], () => undefined) as unknown as Readable;
}

function decoderOf(coding: string): NodeJS.ReadWriteStream | undefined {
  const { constants } = zlib;
  // Lenient like fetch (and cURL): a slightly truncated answer still decodes.
  const sync = { flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH };
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(sync);
  if (coding === 'deflate') return zlib.createInflate(sync);
  if (coding === 'br')
    return zlib.createBrotliDecompress({
      flush: constants.BROTLI_OPERATION_FLUSH,
      finishFlush: constants.BROTLI_OPERATION_FLUSH,
    });
  if (coding === 'zstd') return zlib.createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: 23 } });
  return undefined;
}
