/** Deployed agents with their status, recent conversations, readiness, a few metrics and charts over time. */
import { useQuery } from '@tanstack/react-query';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Badge, Empty, ErrorMessage, Loading, Named, PageHeader, TableBox, formatTime } from '../../components/ui.tsx';
import { plural, t } from '../../i18n/index.ts';
import { Tx } from '../../i18n/Tx.tsx';
import { formatBytes, formatDuration, keyMetrics, parsePrometheus } from '../../lib/metrics.ts';
import { BASE, Link } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';
import { OverTime } from './OverTime.tsx';

export function Dashboard() {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const deployments = useQuery({ queryKey: ['deployments'], queryFn: api.deployments, refetchInterval: 5_000 });
  const conversations = useQuery({
    queryKey: ['conversations', 'recent'],
    queryFn: () => api.conversations({ limit: 8 }),
    refetchInterval: 10_000,
  });
  const health = useQuery({ queryKey: ['health'], queryFn: api.health, refetchInterval: 10_000, retry: false });
  const metrics = useQuery({ queryKey: ['metrics'], queryFn: api.metrics, refetchInterval: 10_000 });
  const names = useAgentNames();
  const figures = metrics.data ? keyMetrics(parsePrometheus(metrics.data), Date.now() / 1000) : undefined;

  return (
    <>
      <PageHeader title={t('dashboard.title')} description={t('dashboard.description')}>
        {canWrite && (
          <Link to={`${BASE}/agents/new`} className="button primary">
            {t('dashboard.build')}
          </Link>
        )}
      </PageHeader>

      <section aria-labelledby="health-h" className="cards">
        <h2 id="health-h" className="visually-hidden">
          {t('dashboard.health')}
        </h2>
        <div className="card stat">
          <span className="stat-label">{t('dashboard.readiness')}</span>
          {health.data ? (
            <Badge status={health.data.status} />
          ) : health.error ? (
            <Badge status="DOWN" />
          ) : (
            <span>…</span>
          )}
          {health.data?.checks.map((c) => (
            <small key={c.name} className="muted">
              {c.name}: {c.status}
              {c.reason ? ` (${c.reason})` : ''}
            </small>
          ))}
        </div>
        <div className="card stat">
          <span className="stat-label">{t('dashboard.requests')}</span>
          <span className="stat-value">{figures?.requests ?? '…'}</span>
          {figures && (
            <small className="muted">
              {t('dashboard.requestErrors', { client: figures.clientErrors, server: figures.serverErrors })}
            </small>
          )}
        </div>
        <div className="card stat">
          <span className="stat-label">{t('dashboard.meanResponse')}</span>
          <span className="stat-value">
            {figures?.meanLatencyMs !== undefined ? `${figures.meanLatencyMs.toFixed(1)} ms` : '–'}
          </span>
          {figures && <small className="muted">{t('dashboard.messages', { count: figures.messages })}</small>}
        </div>
        <div className="card stat">
          <span className="stat-label">{t('dashboard.uptime')}</span>
          <span className="stat-value">
            {figures?.uptimeSeconds !== undefined ? formatDuration(figures.uptimeSeconds) : '–'}
          </span>
          {figures?.residentBytes !== undefined && (
            <small className="muted">{t('dashboard.resident', { bytes: formatBytes(figures.residentBytes) })}</small>
          )}
        </div>
      </section>

      <OverTime names={names} />

      <div className="columns">
        <section aria-labelledby="deployed-h" className="panel">
          <h2 id="deployed-h">{t('dashboard.deployed')}</h2>
          <ErrorMessage error={deployments.error} />
          {deployments.isPending ? (
            <Loading />
          ) : deployments.data && deployments.data.length === 0 ? (
            <Empty>
              {t('dashboard.deployed.empty')}{' '}
              {canWrite ? (
                <Tx
                  k="dashboard.deployed.emptyThen"
                  values={{ build: <Link to={`${BASE}/agents/new`}>{t('dashboard.build')}</Link> }}
                />
              ) : (
                <Link to={`${BASE}/agents`}>{t('dashboard.deployed.seeAgents')}</Link>
              )}
            </Empty>
          ) : (
            <TableBox label={t('dashboard.deployed')} stack>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('common.agent')}</th>
                    <th scope="col">{t('common.environment')}</th>
                    <th scope="col">{t('common.status')}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t('common.actions')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {deployments.data?.map((d) => (
                    <tr key={`${d.environment}-${d.agentId}-${d.agentVersion}`}>
                      <td data-label={t('common.agent')}>
                        <Named
                          name={names.get(d.agentId)}
                          id={d.agentId}
                          unnamed={t('agent.unnamed')}
                          what={t('id.agent')}
                          to={`${BASE}/agents/${d.agentId}`}
                        />{' '}
                        <span className="muted">{t('common.version.short', { version: d.agentVersion })}</span>
                      </td>
                      <td data-label={t('common.environment')}>{d.environment}</td>
                      <td data-label={t('common.status')}>
                        <Badge status={d.status} />
                        {d.error && <small className="field-error"> {d.error}</small>}
                      </td>
                      <td>
                        {d.status === 'READY' && (
                          <Link to={`${BASE}/chat/${d.agentId}?environment=${d.environment}`}>{t('nav.chat')}</Link>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )}
        </section>

        <section aria-labelledby="recent-h" className="panel">
          <h2 id="recent-h">{t('dashboard.recent')}</h2>
          <ErrorMessage error={conversations.error} />
          {conversations.isPending ? (
            <Loading />
          ) : conversations.data && conversations.data.length === 0 ? (
            <Empty>
              {t('dashboard.recent.empty')} <Link to={`${BASE}/chat`}>{t('dashboard.recent.startOne')}</Link>
            </Empty>
          ) : (
            <ul className="plain-list recent">
              {conversations.data?.map((c) => (
                <li key={c.conversationId}>
                  <Link to={`${BASE}/conversations/${c.conversationId}`}>
                    {t('conversation.with', { agent: names.get(c.agentId) || t('agent.unnamed') })}
                  </Link>{' '}
                  <Badge status={c.conversationState} />
                  <div className="muted small">
                    {c.userId ? `${c.userId} · ` : ''}
                    {plural(c.conversationStepSize ?? 0, 'count.steps.one', 'count.steps.other')} ·{' '}
                    {formatTime(c.lastModifiedOn)}
                  </div>
                </li>
              ))}
            </ul>
          )}
          <p>
            <Link to={`${BASE}/conversations`}>{t('dashboard.recent.all')}</Link>
          </p>
        </section>
      </div>
    </>
  );
}
