/** Deployed agents with their status, recent conversations, readiness and a few metrics. */
import { useQuery } from '@tanstack/react-query';
import { useAuth, usePermissions } from '../../auth.tsx';
import { ErrorMessage, Badge, Empty, Loading, PageHeader, formatTime, shortId } from '../../components/ui.tsx';
import { formatBytes, formatDuration, keyMetrics, parsePrometheus } from '../../lib/metrics.ts';
import { BASE, Link } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';

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
      <PageHeader
        title="Dashboard"
        description="What is deployed, what people are saying, and how the service is doing."
      >
        {canWrite && (
          <Link to={`${BASE}/agents/new`} className="button primary">
            Build an agent
          </Link>
        )}
      </PageHeader>

      <section aria-labelledby="health-h" className="cards">
        <h2 id="health-h" className="visually-hidden">
          Service health and metrics
        </h2>
        <div className="card stat">
          <span className="stat-label">Readiness</span>
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
          <span className="stat-label">Requests served</span>
          <span className="stat-value">{figures?.requests ?? '…'}</span>
          {figures && (
            <small className="muted">
              {figures.clientErrors} client errors, {figures.serverErrors} server errors
            </small>
          )}
        </div>
        <div className="card stat">
          <span className="stat-label">Mean response time</span>
          <span className="stat-value">
            {figures?.meanLatencyMs !== undefined ? `${figures.meanLatencyMs.toFixed(1)} ms` : '–'}
          </span>
          {figures && <small className="muted">{figures.messages} conversation messages</small>}
        </div>
        <div className="card stat">
          <span className="stat-label">Uptime / memory</span>
          <span className="stat-value">
            {figures?.uptimeSeconds !== undefined ? formatDuration(figures.uptimeSeconds) : '–'}
          </span>
          {figures?.residentBytes !== undefined && (
            <small className="muted">{formatBytes(figures.residentBytes)} resident</small>
          )}
        </div>
      </section>

      <div className="columns">
        <section aria-labelledby="deployed-h" className="panel">
          <h2 id="deployed-h">Deployed agents</h2>
          <ErrorMessage error={deployments.error} />
          {deployments.isPending ? (
            <Loading />
          ) : deployments.data && deployments.data.length === 0 ? (
            <Empty>
              Nothing is deployed yet.
              {canWrite && (
                <>
                  {' '}
                  <Link to={`${BASE}/agents/new`}>Build an agent</Link>, then deploy it from its page.
                </>
              )}
            </Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {deployments.data?.map((d) => (
                  <tr key={`${d.environment}-${d.agentId}-${d.agentVersion}`}>
                    <td>
                      <Link to={`${BASE}/agents/${d.agentId}`}>{names.get(d.agentId) || shortId(d.agentId)}</Link>{' '}
                      <span className="muted">v{d.agentVersion}</span>
                    </td>
                    <td>{d.environment}</td>
                    <td>
                      <Badge status={d.status} />
                      {d.error && <small className="field-error"> {d.error}</small>}
                    </td>
                    <td>
                      {d.status === 'READY' && (
                        <Link to={`${BASE}/chat/${d.agentId}?environment=${d.environment}`}>Chat</Link>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>

        <section aria-labelledby="recent-h" className="panel">
          <h2 id="recent-h">Recent conversations</h2>
          <ErrorMessage error={conversations.error} />
          {conversations.isPending ? (
            <Loading />
          ) : conversations.data && conversations.data.length === 0 ? (
            <Empty>No conversations yet.</Empty>
          ) : (
            <ul className="plain-list">
              {conversations.data?.map((c) => (
                <li key={c.conversationId}>
                  <Link to={`${BASE}/conversations/${c.conversationId}`}>
                    {names.get(c.agentId) || shortId(c.agentId)}
                  </Link>{' '}
                  <Badge status={c.conversationState} />{' '}
                  <span className="muted">
                    {c.userId ? `${c.userId} · ` : ''}
                    {c.conversationStepSize ?? '?'} steps · {formatTime(c.lastModifiedOn)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <p>
            <Link to={`${BASE}/conversations`}>All conversations</Link>
          </p>
        </section>
      </div>
    </>
  );
}
