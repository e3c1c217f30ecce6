import type { DatabaseSync } from 'node:sqlite';
import type { RateLimitBucket, RateLimitStore } from '../rate-limit-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const REFILLED = 'MIN(rate_limit, tokens + MAX(0, :now - updated_on) * rate_limit / 60000.0)';

const STATEMENTS = {
  ensure:
    'INSERT INTO tool_rate_limits (tool, rate_limit, tokens, updated_on) VALUES (:tool, :limit, :limit, :now) ON CONFLICT (tool) DO NOTHING',
  read: `SELECT rate_limit, ${REFILLED} AS tokens FROM tool_rate_limits WHERE tool = :tool`,
  write: 'UPDATE tool_rate_limits SET tokens = :tokens, updated_on = :now WHERE tool = :tool',
  setLimit: `INSERT INTO tool_rate_limits (tool, rate_limit, tokens, updated_on) VALUES (:tool, :limit, :limit, :now)
    ON CONFLICT (tool) DO UPDATE SET rate_limit = :limit, tokens = :limit, updated_on = :now`,
};

/** Tool token buckets in SQLite (one process owns the file; kept in the store so limits survive a restart). */
export class SqliteRateLimitStore extends SqliteStore<keyof typeof STATEMENTS> implements RateLimitStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async take(tool: string, defaultLimit: number, now: number): Promise<{ taken: boolean; bucket: RateLimitBucket }> {
    return this.write(() => {
      const bucket = this.#current(tool, defaultLimit, now);
      const taken = bucket.tokens >= 1;
      const tokens = taken ? bucket.tokens - 1 : bucket.tokens;
      this.sql.write.run({ tool, tokens, now });
      return { taken, bucket: { limit: bucket.limit, tokens } };
    });
  }

  async read(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket> {
    return this.#current(tool, defaultLimit, now);
  }

  async setLimit(tool: string, limit: number, now: number): Promise<RateLimitBucket> {
    this.sql.setLimit.run({ tool, limit, now });
    return { limit, tokens: limit };
  }

  async refill(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket> {
    const { limit } = this.#current(tool, defaultLimit, now);
    this.sql.write.run({ tool, tokens: limit, now });
    return { limit, tokens: limit };
  }

  #current(tool: string, defaultLimit: number, now: number): RateLimitBucket {
    this.sql.ensure.run({ tool, limit: defaultLimit, now });
    const row = this.sql.read.get({ tool, now })!;
    return { limit: Number(row.rate_limit), tokens: Number(row.tokens) };
  }
}
