import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolHistory } from './tool-history.ts';

describe('tool history', () => {
  it('refills a token bucket over time and resets it (buckets in memory)', async () => {
    let now = 0;
    const history = new ToolHistory({ defaultRateLimitPerMinute: 2, clock: () => now });
    assert.equal(await history.rateLimits.tryAcquire('calculator'), true);
    assert.equal(await history.rateLimits.tryAcquire('calculator'), true);
    assert.equal(await history.rateLimits.tryAcquire('calculator'), false);
    assert.deepEqual(await history.rateLimits.info('calculator'), {
      tool: 'calculator',
      limit: 2,
      remaining: 0,
      resetTimeMs: 60_000,
    });
    now = 30_000;
    assert.equal((await history.rateLimits.info('calculator')).remaining, 1);
    assert.equal((await history.rateLimits.reset('calculator')).remaining, 2);
  });

  it('expires cached results after the TTL of the tool', () => {
    let now = 1_000;
    const history = new ToolHistory({ defaultRateLimitPerMinute: 10, clock: () => now });
    history.cache.put('datetime', {}, 'noon');
    history.cache.put('calculator', { expression: '1+1' }, '2');
    assert.equal(history.cache.get('datetime', {}), 'noon');
    now = 62_000;
    assert.equal(history.cache.get('datetime', {}), undefined, 'datetime lives 60 s');
    assert.equal(history.cache.get('calculator', { expression: '1+1' }), '2');
    assert.deepEqual(history.cache.stats().entriesByTool, { calculator: 1 });
  });

  it('prices model calls from the table and unknown models at zero', () => {
    const history = new ToolHistory({ defaultRateLimitPerMinute: 10 });
    assert.equal(history.recordModelCall('c', 'openai', 'gpt-4o-mini', 1_000_000, 0), 0.15);
    assert.equal(history.recordModelCall('c', 'ollama', 'llama3.2', 1_000_000, 1_000_000), 0);
    assert.equal(history.costs.conversation('c').modelCalls, 2);
  });
});
