import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay, retryAfterMillis, retryDelay, retrying, type Backoff } from './retry.ts';

const backoff: Backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 350 };
const NOW = Date.parse('2026-01-02T03:04:05Z');

describe('retryAfterMillis', () => {
  it('reads delay seconds and HTTP dates, and nothing else', () => {
    assert.equal(retryAfterMillis('120'), 120_000);
    assert.equal(retryAfterMillis(' 0 '), 0);
    assert.equal(retryAfterMillis('Fri, 02 Jan 2026 03:04:15 GMT', NOW), 10_000);
    assert.equal(retryAfterMillis('Fri, 02 Jan 2026 03:00:00 GMT', NOW), 0, 'a date in the past means at once');
    assert.equal(retryAfterMillis('-5'), undefined);
    assert.equal(retryAfterMillis('soon'), undefined);
    assert.equal(retryAfterMillis(''), undefined);
    assert.equal(retryAfterMillis(undefined), undefined);
  });
});

describe('retryDelay', () => {
  it('backs off exponentially up to the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((attempt) => backoffDelay(backoff, attempt)),
      [100, 200, 350, 350],
    );
    assert.deepEqual(
      [1, 2, 3].map((attempt) => retryDelay(backoff, attempt, {})),
      [100, 200, 350],
    );
  });

  it('waits what Retry-After asks instead, never above the cap', () => {
    assert.equal(retryDelay(backoff, 3, { retryAfter: '0' }), 0);
    assert.equal(retryDelay(backoff, 1, { retryAfter: 'Fri, 02 Jan 2026 03:04:05 GMT' }, NOW - 250), 250);
    assert.equal(retryDelay(backoff, 1, { retryAfter: '3600' }), 350);
    assert.equal(
      retryDelay(backoff, 2, { retryAfter: 'garbage' }),
      200,
      'an unreadable value falls back to the backoff',
    );
  });
});

describe('retrying', () => {
  const quick: Backoff = { initialDelayMs: 1, multiplier: 2, maxDelayMs: 5 };

  it('retries failures it is asked to, and throws the last one', async () => {
    const seen: number[] = [];
    await assert.rejects(
      retrying(
        async (number) => {
          seen.push(number);
          throw new Error(`failure ${number}`);
        },
        { maxAttempts: 3, backoff: quick, retryError: () => ({}) },
      ),
      /failure 3/,
    );
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('throws a final failure at once', async () => {
    let attempts = 0;
    await assert.rejects(
      retrying(
        async () => {
          attempts++;
          throw new Error('final');
        },
        { maxAttempts: 5, backoff: quick, retryError: () => undefined },
      ),
      /final/,
    );
    assert.equal(attempts, 1);
  });

  it('retries unwanted results and keeps the last one when the attempts run out', async () => {
    const statuses = [503, 503, 200];
    const kept = await retrying(async (number) => statuses[number - 1]!, {
      maxAttempts: 3,
      backoff: quick,
      retryError: () => ({}),
      retryResult: (status) => (status === 503 ? {} : undefined),
    });
    assert.deepEqual(kept, { value: 200, attempts: 3 });
    const last = await retrying(async () => 503, {
      maxAttempts: 2,
      backoff: quick,
      retryError: () => ({}),
      retryResult: () => ({}),
    });
    assert.deepEqual(last, { value: 503, attempts: 2 });
  });

  it('waits what the server asked for (capped) between attempts', async () => {
    const asked: Backoff = { initialDelayMs: 1, multiplier: 2, maxDelayMs: 200 };
    const started = performance.now();
    await retrying(async (number) => number, {
      maxAttempts: 2,
      backoff: asked,
      retryError: () => ({}),
      retryResult: () => ({ retryAfter: '3600' }),
    });
    const waited = performance.now() - started;
    assert.ok(waited >= 190, `waited ${waited} ms, the cap`);
    assert.ok(waited < 2000, `waited ${waited} ms, not an hour`);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const running = retrying(
      async () => {
        setImmediate(() => controller.abort());
        throw new Error('transient');
      },
      {
        maxAttempts: 3,
        backoff: { initialDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000 },
        signal: controller.signal,
        retryError: () => ({}),
      },
    );
    await assert.rejects(running, { name: 'AbortError' });
  });
});
