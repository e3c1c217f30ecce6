import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ConversationMeters, LlmMeters } from './domain-metrics.ts';
import { MetricSeries } from './metric-series.ts';

function seriesWithClock(start: number) {
  const registers = [new Registry()];
  const conversations = new ConversationMeters(registers);
  const llm = new LlmMeters(registers);
  const clock = { now: start };
  const series = new MetricSeries(
    { turns: conversations.turns, turnDuration: conversations.turnDuration, llmCost: llm.cost },
    () => clock.now,
  );
  return { conversations, llm, clock, series };
}

describe('metric series', () => {
  it('closes a point per 10 s step with turns, errors, percentiles and cost; the last point is in progress', async () => {
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const { conversations, llm, clock, series } = seriesWithClock(start);
    await series.sample();
    // 100 turns of agent a: 90 fast (in the 5-10 ms bucket), 10 slow (in the 1-2.5 s bucket); 2 errors of agent b.
    for (let n = 0; n < 90; n++) conversations.turnFinished('a', 'READY', 0.007);
    for (let n = 0; n < 10; n++) conversations.turnFinished('a', 'READY', 2);
    conversations.turnFinished('b', 'ERROR', 0.003);
    conversations.turnFinished('b', 'TIMEOUT', 60);
    llm.used('openai', 'gpt-4o-mini', 1000, 500, 0.25);
    clock.now += 10_000;
    await series.sample();
    conversations.turnFinished('a', 'READY', 0.007);

    const hour = await series.series('hour');
    assert.equal(hour.window, 'hour');
    assert.equal(hour.stepSeconds, 10);
    assert.equal(hour.points.length, 2);
    const [closed, current] = hour.points;
    assert.equal(closed!.t, start);
    assert.equal(closed!.turns, 102);
    assert.equal(closed!.errors, 2);
    assert.equal(closed!.llmCostUsd, 0.25);
    // Rank 51 of 102 falls in the 5-10 ms bucket (1 turn below it, 90 in it): 5 + 5 * 50/90 ms.
    assert.ok(Math.abs(closed!.p50Ms! - (5 + (5 * 50) / 90)) < 0.01, String(closed!.p50Ms));
    assert.ok(closed!.p95Ms! > 1000 && closed!.p95Ms! <= 2500, String(closed!.p95Ms));
    assert.equal(current!.t, start + 10_000);
    assert.equal(current!.turns, 1);
    assert.equal(current!.llmCostUsd, 0);
    assert.deepEqual(hour.byAgent, [
      { agentId: 'a', turns: 101, errors: 0 },
      { agentId: 'b', turns: 2, errors: 2 },
    ]);

    const day = await series.series('day');
    assert.equal(day.stepSeconds, 60);
    assert.equal(day.points.length, 1, 'the minute is still in progress');
    assert.equal(day.points[0]!.turns, 103);
    assert.equal(day.points[0]!.t, start);
  });

  it('keeps a fixed number of points: the hour at 10 s steps, the day at 1 min steps', async () => {
    const { conversations, clock, series } = seriesWithClock(Date.UTC(2026, 0, 1));
    await series.sample();
    for (let step = 0; step < 400; step++) {
      conversations.turnFinished('a', 'READY', 0.01);
      clock.now += 10_000;
      await series.sample();
    }
    const hour = await series.series('hour');
    assert.equal(hour.points.length, 361, '360 closed steps and the one in progress');
    assert.equal(hour.points.at(-2)!.turns, 1);
    assert.ok(hour.points.every((point, index) => index === 0 || point.t === hour.points[index - 1]!.t + 10_000));
    assert.equal(hour.byAgent[0]!.turns, 360);
    const day = await series.series('day');
    assert.equal(day.points.length, Math.floor(400 / 6) + 1);
    assert.equal(day.byAgent[0]!.turns, 400);
  });

  it('answers null percentiles for a step without turns', async () => {
    const { series } = seriesWithClock(Date.UTC(2026, 0, 1));
    const hour = await series.series('hour');
    assert.deepEqual(
      hour.points.map(({ turns, p50Ms, p99Ms }) => ({ turns, p50Ms, p99Ms })),
      [{ turns: 0, p50Ms: null, p99Ms: null }],
    );
    assert.deepEqual(hour.byAgent, []);
  });
});
