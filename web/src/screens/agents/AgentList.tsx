/** Agents: search the descriptors, see where each is deployed. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useResourceKinds } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Badge, Empty, ErrorMessage, Field, Loading, PageHeader, formatTime } from '../../components/ui.tsx';
import { parseResourceUri } from '../../lib/uri.ts';
import { BASE, Link } from '../../router.tsx';
import { useDebounced } from '../../useDebounced.ts';

export function AgentList() {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, 250);
  const agentPath = useResourceKinds()?.agent.storePath;
  const agents = useQuery({
    queryKey: ['descriptors', agentPath, filter],
    queryFn: () => api.descriptors(agentPath!, { filter, limit: 200 }),
    enabled: agentPath !== undefined,
  });
  const deployments = useQuery({ queryKey: ['deployments'], queryFn: api.deployments, refetchInterval: 5_000 });

  return (
    <>
      <PageHeader
        title="Agents"
        description="Each agent runs one or more workflows. Build one with the guided form, deploy it, then chat with it."
      >
        {canWrite && (
          <Link to={`${BASE}/agents/new`} className="button primary">
            New agent
          </Link>
        )}
      </PageHeader>
      <div className="toolbar">
        <Field
          label="Search agents"
          value={search}
          onChange={setSearch}
          type="search"
          placeholder="Name or description"
        />
      </div>
      <ErrorMessage error={agents.error} />
      {agents.isPending ? (
        <Loading />
      ) : agents.data?.length === 0 ? (
        <Empty>
          {filter ? `No agent matches "${filter}".` : 'No agents yet.'}
          {canWrite && (
            <>
              {' '}
              <Link to={`${BASE}/agents/new`}>Create one</Link>.
            </>
          )}
        </Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Version</th>
              <th scope="col">Deployed</th>
              <th scope="col" className="hide-narrow">
                Modified
              </th>
            </tr>
          </thead>
          <tbody>
            {agents.data?.map((d) => {
              const ref = parseResourceUri(d.resource);
              if (!ref) return null;
              const deployed = deployments.data?.filter((x) => x.agentId === ref.id) ?? [];
              return (
                <tr key={ref.id}>
                  <td>
                    <Link to={`${BASE}/agents/${ref.id}`}>{d.name || '(unnamed agent)'}</Link>
                    {d.description && <div className="muted small">{d.description}</div>}
                  </td>
                  <td>{ref.version}</td>
                  <td>
                    {deployed.length === 0 ? (
                      <span className="muted">not deployed</span>
                    ) : (
                      deployed.map((x) => (
                        <span key={`${x.environment}-${x.agentVersion}`} className="nowrap">
                          <Badge
                            status={x.status}
                            label={`${x.environment} v${x.agentVersion}: ${x.status.replace('_', ' ')}`}
                          />{' '}
                        </span>
                      ))
                    )}
                  </td>
                  <td className="hide-narrow">{formatTime(d.lastModifiedOn)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
