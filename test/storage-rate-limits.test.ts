import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ToolRateLimiter } from '../src/llm/rate-limiter.ts';
import { openStorage } from '../src/storage/open.ts';
import type { Storage } from '../src/storage/ports.ts';
import { createTestDatabase } from './support/postgres.ts';

/** LLM tool rate limits kept in the store: the same buckets for every instance. */
for (const type of ['sqlite', 'postgres'] as const) {
  describe(`tool rate limits in ${type}`, () => {
    let first: Storage;
    let second: Storage;
    let drop = async () => {};
    before(async () => {
      if (type === 'sqlite') {
        first = await openStorage({ type: 'sqlite', path: ':memory:' });
        second = first;
      } else {
        const database = await createTestDatabase();
        drop = database.drop;
        first = await openStorage({ type: 'postgres', url: database.url });
        second = await openStorage({ type: 'postgres', url: database.url });
      }
    });
    after(async () => {
      await first?.close();
      if (second !== first) await second?.close();
      await drop();
    });

    it('refills over time, resets, and takes a new limit', async () => {
      let now = 1_000;
      const limiter = new ToolRateLimiter({ store: first.rateLimits, defaultLimitPerMinute: 2, clock: () => now });
      assert.equal(await limiter.tryAcquire('calculator'), true);
      assert.equal(await limiter.tryAcquire('calculator'), true);
      assert.equal(await limiter.tryAcquire('calculator'), false);
      assert.deepEqual(await limiter.info('calculator'), {
        tool: 'calculator',
        limit: 2,
        remaining: 0,
        resetTimeMs: 60_000,
      });
      now += 30_000;
      assert.equal((await limiter.info('calculator')).remaining, 1);
      assert.equal((await limiter.reset('calculator')).remaining, 2);
      assert.deepEqual(await limiter.setLimit('calculator', 7), {
        tool: 'calculator',
        limit: 7,
        remaining: 7,
        resetTimeMs: 0,
      });
      assert.equal((await limiter.info('calculator')).limit, 7);
    });

    it('two instances draw from one bucket: of 12 concurrent calls with a limit of 5, exactly 5 pass', async () => {
      const now = () => 5_000;
      const a = new ToolRateLimiter({ store: first.rateLimits, defaultLimitPerMinute: 5, clock: now });
      const b = new ToolRateLimiter({ store: second.rateLimits, defaultLimitPerMinute: 5, clock: now });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) => (n % 2 === 0 ? a : b).tryAcquire('webscraper')),
      );
      assert.equal(results.filter(Boolean).length, 5);
    });
  });
}
