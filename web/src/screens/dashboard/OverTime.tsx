/** The dashboard over time: turns per minute, latency percentiles, errors by agent and LLM cost (last hour or day). */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useAuth } from '../../auth.tsx';
import { type Line, LineChart } from '../../components/LineChart.tsx';
import { Empty, ErrorMessage, Loading, Named } from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { chartColumns, errorsByAgent, formatUsd, type SeriesWindow, seriesTotals } from '../../lib/series.ts';
import { BASE, Link } from '../../router.tsx';

const perMinute = (v: number) => (v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1));
const milliseconds = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`);

export function OverTime({ names }: { names: Map<string, string> }) {
  const { api } = useAuth();
  const [span, setSpan] = useState<SeriesWindow>('hour');
  const series = useQuery({
    queryKey: ['metrics-series', span],
    queryFn: () => api.metricsSeries(span),
    refetchInterval: 30_000,
  });
  const charts = useMemo(() => {
    if (!series.data) return undefined;
    const c = chartColumns(series.data);
    const turns: Line[] = [
      { label: t('overTime.turns'), values: c.turnsPerMinute, colorVar: '--chart-1' },
      { label: t('overTime.errors'), values: c.errorsPerMinute, colorVar: '--chart-bad' },
    ];
    const latency: Line[] = [
      { label: 'p50', values: c.p50Ms, colorVar: '--chart-1' },
      { label: 'p95', values: c.p95Ms, colorVar: '--chart-2' },
      { label: 'p99', values: c.p99Ms, colorVar: '--chart-3' },
    ];
    const cost: Line[] = [{ label: t('overTime.cost'), values: c.llmCostUsd, colorVar: '--chart-2' }];
    return { x: c.x, turns, latency, cost };
  }, [series.data]);
  const totals = series.data ? seriesTotals(series.data) : undefined;
  const agents = series.data ? errorsByAgent(series.data) : [];
  const mostTurns = Math.max(1, ...agents.map((a) => a.turns));
  const p95 = charts?.latency[1]?.values.filter((v): v is number => v !== null) ?? [];
  // Inside a sentence ("over the last hour"), not the radio button's label.
  const windowLabel = span === 'hour' ? t('overTime.inSentence.hour') : t('overTime.inSentence.day');

  return (
    <section aria-labelledby="over-time-h" className="panel over-time">
      <div className="panel-head">
        <h2 id="over-time-h">{t('overTime.title')}</h2>
        <fieldset className="segmented compact">
          <legend className="visually-hidden">{t('overTime.window')}</legend>
          {(['hour', 'day'] as const).map((w) => (
            <label key={w}>
              <input type="radio" name="series-window" checked={span === w} onChange={() => setSpan(w)} />
              {w === 'hour' ? t('overTime.lastHour') : t('overTime.lastDay')}
            </label>
          ))}
        </fieldset>
      </div>
      <ErrorMessage error={series.error} title={t('overTime.unavailable')} />
      {series.isPending ? (
        <Loading />
      ) : charts && totals ? (
        totals.turns === 0 ? (
          <Empty>
            {t('overTime.empty', { window: windowLabel })} <Link to={`${BASE}/chat`}>{t('overTime.emptyAction')}</Link>
          </Empty>
        ) : (
          <div className="chart-grid">
            <figure>
              <figcaption>
                {t('overTime.turnsTitle')}{' '}
                <span className="muted small">
                  {t('overTime.turnsTotal', { turns: totals.turns, errors: totals.errors })}
                </span>
              </figcaption>
              <LineChart
                x={charts.x}
                lines={charts.turns}
                format={perMinute}
                summary={t('overTime.turnsSummary', {
                  window: windowLabel,
                  turns: totals.turns,
                  errors: totals.errors,
                })}
              />
            </figure>
            <figure>
              <figcaption>{t('overTime.latencyTitle')}</figcaption>
              <LineChart
                x={charts.x}
                lines={charts.latency}
                format={milliseconds}
                summary={t('overTime.latencySummary', {
                  window: windowLabel,
                  worst: p95.length ? milliseconds(Math.max(...p95)) : '–',
                })}
              />
            </figure>
            <figure>
              <figcaption>
                {t('overTime.costTitle')} <span className="muted small">{formatUsd(totals.llmCostUsd)}</span>
              </figcaption>
              <LineChart
                x={charts.x}
                lines={charts.cost}
                format={formatUsd}
                summary={t('overTime.costSummary', { window: windowLabel, cost: formatUsd(totals.llmCostUsd) })}
              />
            </figure>
            <figure>
              <figcaption>{t('overTime.byAgentTitle')}</figcaption>
              <ul className="bars">
                {agents.map((a) => (
                  <li key={a.agentId}>
                    <Named
                      name={names.get(a.agentId)}
                      id={a.agentId}
                      unnamed={t('agent.unnamed')}
                      what={t('id.agent')}
                      to={`${BASE}/agents/${a.agentId}`}
                    />
                    <span className="bar" aria-hidden="true">
                      <span className="bar-turns" style={{ width: `${(a.turns / mostTurns) * 100}%` }} />
                      <span className="bar-errors" style={{ width: `${(a.errors / mostTurns) * 100}%` }} />
                    </span>
                    <span className="small">{t('overTime.agentCounts', { turns: a.turns, errors: a.errors })}</span>
                  </li>
                ))}
              </ul>
            </figure>
          </div>
        )
      ) : null}
    </section>
  );
}
