import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chartColumns, errorsByAgent, formatUsd, type MetricsSeries, seriesTotals } from './series.ts';

const series: MetricsSeries = {
  window: 'hour',
  stepSeconds: 300,
  points: [
    { t: 1_700_000_300_000, turns: 10, errors: 5, p50Ms: 12, p95Ms: 40, p99Ms: 90, llmCostUsd: 0.5 },
    { t: 1_700_000_000_000, turns: 0, errors: 0, p50Ms: null, p95Ms: null, p99Ms: null, llmCostUsd: 0 },
  ],
  byAgent: [
    { agentId: 'a', turns: 3, errors: 0 },
    { agentId: 'b', turns: 1, errors: 1 },
    { agentId: 'c', turns: 0, errors: 0 },
    { agentId: 'd', turns: 9, errors: 1 },
  ],
};

describe('metrics series for the dashboard charts', () => {
  it('orders points by time, in epoch seconds, with rates per minute and gaps where nothing ran', () => {
    const columns = chartColumns(series);
    assert.deepEqual(columns.x, [1_700_000_000, 1_700_000_300]);
    assert.deepEqual(columns.turnsPerMinute, [0, 2]);
    assert.deepEqual(columns.errorsPerMinute, [0, 1]);
    assert.deepEqual(columns.p50Ms, [null, 12]);
    assert.deepEqual(columns.p99Ms, [null, 90]);
    assert.deepEqual(columns.llmCostUsd, [0, 0.5]);
  });
  it('sums the window and ranks agents by errors, then turns, leaving out idle ones', () => {
    assert.deepEqual(seriesTotals(series), { turns: 10, errors: 5, llmCostUsd: 0.5 });
    assert.deepEqual(
      errorsByAgent(series).map((a) => a.agentId),
      ['d', 'b', 'a'],
    );
    assert.deepEqual(
      errorsByAgent(series, 1).map((a) => a.agentId),
      ['d'],
    );
  });
  it('formats costs', () => {
    assert.equal(formatUsd(0), '$0');
    assert.equal(formatUsd(0.0012), '$0.0012');
    assert.equal(formatUsd(1.5), '$1.50');
  });
});
