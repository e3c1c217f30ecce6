import type { RateLimitBucket, RateLimitStore } from '../storage/rate-limit-ports.ts';

/**
 * A token bucket per tool: `limit` calls per minute, refilled continuously. The limit is adjustable per tool;
 * a reset fills the bucket again. The buckets live in the store, so every instance draws from the same ones.
 */

export interface RateLimitInfo {
  readonly tool: string;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the bucket is full again (0 = full). */
  readonly resetTimeMs: number;
}

const WINDOW_MS = 60_000;

export class ToolRateLimiter {
  readonly #store: RateLimitStore;
  readonly #defaultLimit: number;
  readonly #clock: () => number;

  constructor(options: { store?: RateLimitStore | undefined; defaultLimitPerMinute: number; clock?: () => number }) {
    this.#store = options.store ?? new MemoryRateLimitStore();
    this.#defaultLimit = options.defaultLimitPerMinute;
    this.#clock = options.clock ?? Date.now;
  }

  /** Takes one call from the tool's bucket; false when the bucket is empty. */
  async tryAcquire(tool: string): Promise<boolean> {
    return (await this.#store.take(tool, this.#defaultLimit, this.#clock())).taken;
  }

  async info(tool: string): Promise<RateLimitInfo> {
    return describe(tool, await this.#store.read(tool, this.#defaultLimit, this.#clock()));
  }

  /** Sets the calls per minute of a tool; the bucket starts full. */
  async setLimit(tool: string, limit: number): Promise<RateLimitInfo> {
    return describe(tool, await this.#store.setLimit(tool, limit, this.#clock()));
  }

  async reset(tool: string): Promise<RateLimitInfo> {
    return describe(tool, await this.#store.refill(tool, this.#defaultLimit, this.#clock()));
  }
}

function describe(tool: string, bucket: RateLimitBucket): RateLimitInfo {
  const missing = bucket.limit - bucket.tokens;
  return {
    tool,
    limit: bucket.limit,
    remaining: Math.floor(bucket.tokens),
    resetTimeMs: missing <= 0 ? 0 : Math.ceil((missing * WINDOW_MS) / bucket.limit),
  };
}

/** Buckets in this process only (when no store is given, e.g. in unit tests). */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #buckets = new Map<string, { limit: number; tokens: number; updatedAt: number }>();

  async take(tool: string, defaultLimit: number, now: number) {
    const bucket = this.#refilled(tool, defaultLimit, now);
    const taken = bucket.tokens >= 1;
    if (taken) bucket.tokens -= 1;
    return { taken, bucket: { limit: bucket.limit, tokens: bucket.tokens } };
  }

  async read(tool: string, defaultLimit: number, now: number) {
    const { limit, tokens } = this.#refilled(tool, defaultLimit, now);
    return { limit, tokens };
  }

  async setLimit(tool: string, limit: number, now: number) {
    this.#buckets.set(tool, { limit, tokens: limit, updatedAt: now });
    return { limit, tokens: limit };
  }

  async refill(tool: string, defaultLimit: number, now: number) {
    const bucket = this.#refilled(tool, defaultLimit, now);
    bucket.tokens = bucket.limit;
    return { limit: bucket.limit, tokens: bucket.tokens };
  }

  #refilled(tool: string, defaultLimit: number, now: number) {
    const bucket = this.#buckets.get(tool) ?? { limit: defaultLimit, tokens: defaultLimit, updatedAt: now };
    bucket.tokens = Math.min(
      bucket.limit,
      bucket.tokens + (Math.max(0, now - bucket.updatedAt) * bucket.limit) / WINDOW_MS,
    );
    bucket.updatedAt = now;
    this.#buckets.set(tool, bucket);
    return bucket;
  }
}
