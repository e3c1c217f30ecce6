import { retrying, type Backoff } from '../../shared/retry.ts';
import { resolvePath } from '../../templating/paths.ts';
import type { CompiledMatcher, CompiledRetry } from './compile.ts';
import { TransportError, type IncomingResponse } from './transport.ts';

/**
 * `retryApiCallInstruction` (reference §8.5): a call is sent again when the status is one of `retryOnHttpCodes`,
 * when a `responseValuePathMatchers` entry signals, or when no response came at all (refused, reset, timed out),
 * at most `maxRetries` times, waiting `base × 2^(attempt−1)` ms (capped), or what the target's `Retry-After` asks
 * (within the same cap), in between. After the last attempt the final response is used; a final transport failure
 * is thrown. Refused targets (URL guard) and interrupted turns are never retried.
 */

export interface RetriedResponse {
  readonly response: IncomingResponse;
  readonly body: unknown;
  readonly validationFailed: boolean;
  readonly attempts: number;
}

const NEVER_RETRIED = new Set(['BLOCKED', 'EABORTED']);

function matches(matcher: CompiledMatcher, body: unknown): boolean {
  const value = resolvePath(body, matcher.path);
  if (value === undefined || value === null) return false;
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (matcher.equals !== undefined && text !== matcher.equals) return false;
  if (matcher.contains !== undefined && !text.includes(matcher.contains)) return false;
  return true;
}

/** Whether the response asks for a retry through its matchers. */
export function matcherSignals(retry: CompiledRetry, body: unknown): boolean {
  return retry.matchers.some((matcher) => matches(matcher, body) !== matcher.trueIfNoMatch);
}

export function backoffOf(retry: CompiledRetry): Backoff {
  return { initialDelayMs: retry.baseDelayMillis, multiplier: 2, maxDelayMs: retry.maxDelayMillis };
}

export async function sendWithRetry(
  send: () => Promise<IncomingResponse>,
  parse: (response: IncomingResponse) => unknown,
  retry: CompiledRetry | undefined,
  signal: AbortSignal | undefined,
): Promise<RetriedResponse> {
  const parsed = await retrying(
    async () => {
      const response = await send();
      const body = parse(response);
      return { response, body, validationFailed: retry !== undefined && matcherSignals(retry, body) };
    },
    {
      maxAttempts: 1 + (retry?.maxRetries ?? 0),
      backoff: retry ? backoffOf(retry) : { initialDelayMs: 0, multiplier: 2, maxDelayMs: 0 },
      signal,
      retryError: (error) => (error instanceof TransportError && NEVER_RETRIED.has(error.code) ? undefined : {}),
      retryResult: ({ response, validationFailed }) => {
        const retryAfter = response.headers['retry-after'];
        return retry?.retryOnHttpCodes.has(response.status) || validationFailed
          ? { retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined }
          : undefined;
      },
    },
  );
  return { ...parsed.value, attempts: parsed.attempts };
}
