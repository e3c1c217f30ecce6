import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronProblem, latestDue, nextDue } from './schedule-times.ts';

const at = (iso: string) => Date.parse(iso);

describe('schedule times', () => {
  it('a cron expression is due in its time zone', () => {
    const berlinNine = { cron: '0 9 * * *', timeZone: 'Europe/Berlin' };
    assert.equal(nextDue(berlinNine, at('2026-01-01T00:00:00Z')), at('2026-01-01T08:00:00Z'));
    assert.equal(nextDue(berlinNine, at('2026-07-01T00:00:00Z')), at('2026-07-01T07:00:00Z'), 'summer time');
    assert.equal(nextDue(berlinNine, at('2026-01-01T08:00:00Z')), at('2026-01-02T08:00:00Z'), 'strictly after');
  });

  it('the latest due time of a window is found without walking every missed one', () => {
    const everyMinute = { cron: '* * * * *', timeZone: 'UTC' };
    assert.equal(
      latestDue(everyMinute, at('2026-01-01T00:00:00Z'), at('2026-03-01T12:34:56Z')),
      at('2026-03-01T12:34:00Z'),
    );
    assert.equal(latestDue(everyMinute, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:59Z')), undefined);
    assert.equal(
      latestDue(everyMinute, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:01:00Z')),
      at('2026-01-01T00:01:00Z'),
    );
  });

  it('an interval is due one interval after its anchor, then every interval', () => {
    const heartbeat = { intervalSeconds: 60, anchor: 1_000 };
    assert.equal(nextDue(heartbeat, 0), 61_000);
    assert.equal(nextDue(heartbeat, 61_000), 121_000);
    assert.equal(latestDue(heartbeat, 1_000, 60_999), undefined);
    assert.equal(latestDue(heartbeat, 1_000, 200_000), 181_000);
    assert.equal(latestDue(heartbeat, 181_000, 200_000), undefined);
  });

  it('names what is wrong with an expression or a time zone', () => {
    assert.equal(cronProblem('*/5 * * * *', 'UTC'), undefined);
    assert.equal(cronProblem('0 */5 * * * *', 'America/New_York'), undefined);
    assert.match(cronProblem('0 9 * *', 'UTC') ?? '', /five fields/);
    assert.match(cronProblem('0 25 * * *', 'UTC') ?? '', /not a cron expression/);
    assert.match(cronProblem('0 9 * * *', 'Mars/Olympus') ?? '', /not an IANA time zone/);
  });
});
