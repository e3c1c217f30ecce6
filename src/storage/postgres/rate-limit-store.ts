import type { Queryable } from './transaction.ts';
import type { RateLimitBucket, RateLimitStore } from '../rate-limit-ports.ts';

/** `refilled`: the bucket's tokens brought up to `$2` (now), capped at its limit. */
const REFILLED = 'LEAST(rate_limit, tokens + GREATEST(0, $2::bigint - updated_on) * rate_limit / 60000.0)';

/** Tool token buckets in PostgreSQL: the row lock of the UPDATE serialises concurrent takes across instances. */
export class PostgresRateLimitStore implements RateLimitStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async take(tool: string, defaultLimit: number, now: number): Promise<{ taken: boolean; bucket: RateLimitBucket }> {
    await this.#ensure(tool, defaultLimit, now);
    const { rows } = await this.#db.query(
      `WITH current AS (SELECT tool, ${REFILLED} AS refilled FROM tool_rate_limits WHERE tool = $1 FOR UPDATE)
       UPDATE tool_rate_limits t
       SET tokens = CASE WHEN c.refilled >= 1 THEN c.refilled - 1 ELSE c.refilled END, updated_on = $2
       FROM current c WHERE t.tool = c.tool
       RETURNING t.rate_limit, t.tokens, c.refilled >= 1 AS taken`,
      [tool, now],
    );
    const row = rows[0];
    return { taken: row.taken === true, bucket: { limit: Number(row.rate_limit), tokens: Number(row.tokens) } };
  }

  async read(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket> {
    await this.#ensure(tool, defaultLimit, now);
    const { rows } = await this.#db.query(
      `SELECT rate_limit, ${REFILLED} AS tokens FROM tool_rate_limits WHERE tool = $1`,
      [tool, now],
    );
    return { limit: Number(rows[0].rate_limit), tokens: Number(rows[0].tokens) };
  }

  async setLimit(tool: string, limit: number, now: number): Promise<RateLimitBucket> {
    await this.#db.query(
      `INSERT INTO tool_rate_limits (tool, rate_limit, tokens, updated_on) VALUES ($1, $2::integer, $2::integer, $3)
       ON CONFLICT (tool) DO UPDATE SET rate_limit = $2::integer, tokens = $2::integer, updated_on = $3`,
      [tool, limit, now],
    );
    return { limit, tokens: limit };
  }

  async refill(tool: string, defaultLimit: number, now: number): Promise<RateLimitBucket> {
    await this.#ensure(tool, defaultLimit, now);
    const { rows } = await this.#db.query(
      'UPDATE tool_rate_limits SET tokens = rate_limit, updated_on = $2 WHERE tool = $1 RETURNING rate_limit',
      [tool, now],
    );
    return { limit: Number(rows[0].rate_limit), tokens: Number(rows[0].rate_limit) };
  }

  async #ensure(tool: string, defaultLimit: number, now: number): Promise<void> {
    await this.#db.query(
      'INSERT INTO tool_rate_limits (tool, rate_limit, tokens, updated_on) VALUES ($1, $2::integer, $2::integer, $3) ON CONFLICT (tool) DO NOTHING',
      [tool, defaultLimit, now],
    );
  }
}
