import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one retry loop of outbound calls (HTTP calls, LLM providers): exponential backoff with a cap, and a
 * server's `Retry-After` (seconds or an HTTP date) honoured in place of the backoff, within the same cap.
 */

export interface Backoff {
  readonly initialDelayMs: number;
  readonly multiplier: number;
  readonly maxDelayMs: number;
}

/** What a failed attempt or an unwanted result says about trying again. */
export interface RetryRequest {
  /** The server's `Retry-After` header, if it sent one. */
  readonly retryAfter?: string | null | undefined;
}

export interface RetryOptions<T> {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  /** Stops the waiting (it rejects with an `AbortError`). */
  readonly signal?: AbortSignal | undefined;
  /** A request to retry the failure, or undefined to throw it at once. After the last attempt it is thrown. */
  readonly retryError: (error: unknown) => RetryRequest | undefined;
  /** A request to retry despite a result, or undefined to keep it. After the last attempt it is kept. */
  readonly retryResult?: ((value: T) => RetryRequest | undefined) | undefined;
  readonly clock?: () => number;
}

export function backoffDelay(backoff: Backoff, attempt: number): number {
  return Math.min(backoff.maxDelayMs, backoff.initialDelayMs * backoff.multiplier ** (attempt - 1));
}

/** Milliseconds a `Retry-After` value asks to wait (delay seconds or an HTTP date), or undefined. */
export function retryAfterMillis(value: string | null | undefined, now: number = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with the day's name (`Fri, 02 Jan 2026 03:04:05 GMT`).
  const date = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait after attempt number `attempt`: what the server asked for, else the backoff; never above the cap. */
export function retryDelay(backoff: Backoff, attempt: number, request: RetryRequest, now: number = Date.now()): number {
  return Math.max(
    0,
    Math.min(backoff.maxDelayMs, retryAfterMillis(request.retryAfter, now) ?? backoffDelay(backoff, attempt)),
  );
}

/** Runs `attempt` (numbered from 1) until it gives a result to keep, the attempts run out or a failure is final. */
export async function retrying<T>(
  attempt: (number: number) => Promise<T>,
  options: RetryOptions<T>,
): Promise<{ value: T; attempts: number }> {
  const clock = options.clock ?? Date.now;
  for (let number = 1; ; number++) {
    const last = number >= options.maxAttempts;
    let request: RetryRequest | undefined;
    try {
      const value = await attempt(number);
      request = last ? undefined : options.retryResult?.(value);
      if (request === undefined) return { value, attempts: number };
    } catch (error) {
      if (last || options.signal?.aborted) throw error;
      request = options.retryError(error);
      if (request === undefined) throw error;
    }
    const wait = retryDelay(options.backoff, number, request, clock());
    if (wait > 0) await sleep(wait, undefined, { signal: options.signal });
  }
}
