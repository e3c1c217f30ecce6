/**
 * A token bucket per tool: `limit` calls per minute, refilled continuously. The limit is adjustable per tool;
 * a reset fills the bucket again.
 */

export interface RateLimitInfo {
  readonly tool: string;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the bucket is full again (0 = full). */
  readonly resetTimeMs: number;
}

interface Bucket {
  limit: number;
  tokens: number;
  updatedAt: number;
}

const WINDOW_MS = 60_000;

export class ToolRateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #defaultLimit: number;
  readonly #clock: () => number;

  constructor(options: { defaultLimitPerMinute: number; clock?: () => number }) {
    this.#defaultLimit = options.defaultLimitPerMinute;
    this.#clock = options.clock ?? Date.now;
  }

  /** Takes one call from the tool's bucket; false when the bucket is empty. */
  tryAcquire(tool: string): boolean {
    const bucket = this.#refilled(tool);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  info(tool: string): RateLimitInfo {
    const bucket = this.#refilled(tool);
    const missing = bucket.limit - bucket.tokens;
    return { tool, limit: bucket.limit, remaining: Math.floor(bucket.tokens), resetTimeMs: missing <= 0 ? 0 : Math.ceil((missing * WINDOW_MS) / bucket.limit) };
  }

  /** Sets the calls per minute of a tool; the bucket starts full. */
  setLimit(tool: string, limit: number): RateLimitInfo {
    this.#buckets.set(tool, { limit, tokens: limit, updatedAt: this.#clock() });
    return this.info(tool);
  }

  reset(tool: string): RateLimitInfo {
    const bucket = this.#refilled(tool);
    bucket.tokens = bucket.limit;
    return this.info(tool);
  }

  #refilled(tool: string): Bucket {
    const now = this.#clock();
    let bucket = this.#buckets.get(tool);
    if (!bucket) {
      bucket = { limit: this.#defaultLimit, tokens: this.#defaultLimit, updatedAt: now };
      this.#buckets.set(tool, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(bucket.limit, bucket.tokens + (elapsed * bucket.limit) / WINDOW_MS);
    bucket.updatedAt = now;
    return bucket;
  }
}
