import { APICallError } from 'ai';
import { isRefusedByUrlGuard } from '../security/url-guard.ts';
import { redact } from '../security/secret-references.ts';
import { retrying } from '../shared/retry.ts';

/**
 * Retries of provider calls on transient errors (reference §9.6): timeouts, 429 and 5xx, with exponential
 * backoff, or the wait the provider's `Retry-After` asks for. A target the URL guard refuses is not retried; an
 * aborted turn stops at once. Errors that leave here carry a message naming provider, model and status, with
 * every credential masked.
 */

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly backoffDelayMs: number;
  readonly backoffMultiplier: number;
  readonly maxBackoffDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  backoffDelayMs: 1000,
  backoffMultiplier: 2,
  maxBackoffDelayMs: 10_000,
};

/** Thrown when the provider timeout (`timeout` parameter) expired. */
export class ProviderTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs / 1000} s`);
    this.name = 'ProviderTimeoutError';
  }
}

/**
 * The connection broke while the answer was being read (the provider's server went away midway): undici ends the
 * body with `terminated`, caused by a socket error. The AI SDK reports it as a failed call with the status of the
 * answer that had begun (200).
 */
function brokeOff(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}

/**
 * A failure after part of a streamed answer already reached the client: not retried (a second answer would follow
 * the first one's tokens). Its `cause` is the failure itself.
 */
export class FailedMidStream extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'FailedMidStream';
  }
}

export function isTransient(error: unknown): boolean {
  if (error instanceof FailedMidStream) return false;
  if (error instanceof ProviderTimeoutError || brokeOff(error)) return true;
  if (isRefusedByUrlGuard(error)) return false;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    return status === undefined ? error.isRetryable : status === 408 || status === 429 || status >= 500;
  }
  // Network failures (connection refused / reset) surface as TypeError from fetch.
  return error instanceof TypeError && /fetch failed|network|socket/i.test(error.message);
}

export async function withRetry<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  attempt: (number: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  let attempts = 0;
  try {
    return await retrying((number) => attempt((attempts = number)), {
      maxAttempts: policy.maxAttempts,
      backoff: {
        initialDelayMs: policy.backoffDelayMs,
        multiplier: policy.backoffMultiplier,
        maxDelayMs: policy.maxBackoffDelayMs,
      },
      signal,
      retryError: (error) =>
        isTransient(error)
          ? { retryAfter: APICallError.isInstance(error) ? error.responseHeaders?.['retry-after'] : undefined }
          : undefined,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new AttemptsFailed(error, attempts);
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
export function providerCallError(
  error: unknown,
  context: { provider: string; modelName: string; secrets: readonly string[] },
): ProviderCallError {
  const attempts = error instanceof AttemptsFailed ? error.attempts : 1;
  if (error instanceof AttemptsFailed) error = error.last;
  if (error instanceof FailedMidStream) error = error.cause;
  const status = APICallError.isInstance(error) ? error.statusCode : undefined;
  const reason = error instanceof Error ? error.message : String(error);
  const what = brokeOff(error)
    ? 'the connection broke off during the answer'
    : status !== undefined
      ? `status ${status}`
      : error instanceof ProviderTimeoutError
        ? 'timeout'
        : 'no answer';
  const message = `The ${context.provider} model '${context.modelName}' failed (${what}) after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${truncate(reason, 500)}`;
  return new ProviderCallError({
    provider: context.provider,
    modelName: context.modelName,
    status,
    message: redact(message, context.secrets),
  });
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
