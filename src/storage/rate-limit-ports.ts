/**
 * Token buckets of the LLM tools (calls per minute, refilled continuously), kept in the store so that every
 * instance draws from the same bucket. A bucket is created full, with the default limit, on first use.
 */
export interface RateLimitBucket {
  readonly limit: number;
  /** Tokens left after refilling up to now (fractional). */
  readonly tokens: number;
}

export interface RateLimitStore {
  /** Takes one token if there is one; `taken` says whether it did. */
  take(tool: string, defaultLimit: number, now: number): Promise<{ taken: boolean; bucket: RateLimitBucket }>;
  read(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket>;
  /** Sets the calls per minute; the bucket starts full. */
  setLimit(tool: string, limit: number, now: number): Promise<RateLimitBucket>;
  /** Fills the bucket again. */
  refill(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket>;
}

/** Tokens after refilling (the same formula in both adapters' SQL). */
export const REFILL_PER_MS = (limit: number) => limit / 60_000;
