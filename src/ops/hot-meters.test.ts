import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot-meters.ts';

describe('hot meters', () => {
  it('expose counters and histograms exactly as prom-client does', async () => {
    const hot = new Registry();
    const reference = new Registry();
    const buckets = [0.01, 0.1, 1];
    const hotHistogram = new HotHistogram({
      name: 'h',
      help: 'a histogram',
      labelNames: ['agent'],
      buckets,
      registers: [hot],
    });
    const referenceHistogram = new Histogram({
      name: 'h',
      help: 'a histogram',
      labelNames: ['agent'],
      buckets,
      registers: [reference],
    });
    for (const [agent, value] of [
      ['a', 0.005],
      ['a', 0.01],
      ['a', 0.5],
      ['b', 3],
      ['a', 0.05],
    ] as const) {
      hotHistogram.labels(agent).observe(value);
      referenceHistogram.labels(agent).observe(value);
    }
    assert.equal(await hot.metrics(), await reference.metrics());

    const counter = new HotCounter({
      name: 'c_total',
      help: 'a counter',
      labelNames: ['kind', 'outcome'],
      registers: [hot],
    });
    const child = counter.labels('agent', 'ok');
    assert.equal(counter.labels('agent', 'ok'), child, 'a label set has one child');
    child.inc();
    child.inc(2);
    counter.inc({ kind: 'agent', outcome: 'error' });
    const text = await hot.metrics();
    assert.match(text, /^# TYPE c_total counter$/m);
    assert.match(text, /^c_total\{kind="agent",outcome="ok"\} 3$/m);
    assert.match(text, /^c_total\{kind="agent",outcome="error"\} 1$/m);
    assert.throws(() => child.inc(-1), /only goes up/);
    assert.throws(() => counter.labels('agent'), /takes the labels kind, outcome/);
  });
});
