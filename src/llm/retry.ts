import { APICallError } from 'ai';
import { redact } from '../security/secret-references.ts';

/**
 * Retries of provider calls on transient errors (reference §9.6): timeouts, 429 and 5xx, with exponential
 * backoff. An aborted turn stops at once. Errors that leave here carry a message naming provider, model and
 * status, with every credential masked.
 */

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly backoffDelayMs: number;
  readonly backoffMultiplier: number;
  readonly maxBackoffDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, backoffDelayMs: 1000, backoffMultiplier: 2, maxBackoffDelayMs: 10_000 };

/** Thrown when the provider timeout (`timeout` parameter) expired. */
export class ProviderTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs / 1000} s`);
    this.name = 'ProviderTimeoutError';
  }
}

export function isTransient(error: unknown): boolean {
  if (error instanceof ProviderTimeoutError) return true;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    return status === undefined ? error.isRetryable : status === 408 || status === 429 || status >= 500;
  }
  // Network failures (connection refused / reset) surface as TypeError from fetch.
  return error instanceof TypeError && /fetch failed|network|socket/i.test(error.message);
}

export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxBackoffDelayMs, policy.backoffDelayMs * policy.backoffMultiplier ** (attempt - 1));
}

export async function withRetry<T>(policy: RetryPolicy, signal: AbortSignal, attempt: (number: number) => Promise<T>): Promise<{ value: T; attempts: number }> {
  for (let number = 1; ; number++) {
    signal.throwIfAborted();
    try {
      return { value: await attempt(number), attempts: number };
    } catch (error) {
      if (signal.aborted) throw error;
      if (number >= policy.maxAttempts || !isTransient(error)) throw new AttemptsFailed(error, number);
      await sleep(backoffDelay(policy, number), signal);
    }
  }
}

/** The last error of a retried call and how many attempts were made. */
export class AttemptsFailed extends Error {
  readonly last: unknown;
  readonly attempts: number;

  constructor(last: unknown, attempts: number) {
    super(last instanceof Error ? last.message : String(last));
    this.name = 'AttemptsFailed';
    this.last = last;
    this.attempts = attempts;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The failure of a provider call after retries, safe to log and show. */
export class ProviderCallError extends Error {
  readonly provider: string;
  readonly modelName: string;
  readonly status: number | undefined;

  constructor(options: { provider: string; modelName: string; status: number | undefined; message: string }) {
    super(options.message);
    this.name = 'ProviderCallError';
    this.provider = options.provider;
    this.modelName = options.modelName;
    this.status = options.status;
  }
}

/** Describes a failed provider call: provider, model, status, attempts and the provider's own words, redacted. */
export function providerCallError(error: unknown, context: { provider: string; modelName: string; secrets: readonly string[] }): ProviderCallError {
  const attempts = error instanceof AttemptsFailed ? error.attempts : 1;
  if (error instanceof AttemptsFailed) error = error.last;
  const status = APICallError.isInstance(error) ? error.statusCode : undefined;
  const reason = error instanceof Error ? error.message : String(error);
  const what = status !== undefined ? `status ${status}` : error instanceof ProviderTimeoutError ? 'timeout' : 'no answer';
  const message = `The ${context.provider} model '${context.modelName}' failed (${what}) after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${truncate(reason, 500)}`;
  return new ProviderCallError({ provider: context.provider, modelName: context.modelName, status, message: redact(message, context.secrets) });
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
