/** Agents: search the descriptors, see where each is deployed. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useResourceKinds } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  Badge,
  Empty,
  ErrorMessage,
  Field,
  Loading,
  Named,
  PageHeader,
  TableBox,
  formatTime,
} from '../../components/ui.tsx';
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
      <PageHeader title={t('agents.title')} description={t('agents.description')}>
        {canWrite && (
          <Link to={`${BASE}/agents/new`} className="button primary">
            {t('agents.new')}
          </Link>
        )}
      </PageHeader>
      <div className="toolbar">
        <Field
          label={t('agents.search')}
          value={search}
          onChange={setSearch}
          type="search"
          placeholder={t('agents.searchPlaceholder')}
        />
      </div>
      <ErrorMessage error={agents.error} />
      {agents.isPending ? (
        <Loading />
      ) : agents.data?.length === 0 ? (
        <Empty>
          {filter ? (
            <>
              {t('agents.noMatch', { filter })}{' '}
              <button type="button" className="link" onClick={() => setSearch('')}>
                {t('list.clearSearch')}
              </button>
            </>
          ) : (
            <>
              {t('agents.empty')}{' '}
              {canWrite ? (
                <Link to={`${BASE}/agents/new`}>{t('agents.createOne')}</Link>
              ) : (
                <Link to={`${BASE}/backup`}>{t('agents.importOne')}</Link>
              )}
            </>
          )}
        </Empty>
      ) : (
        <TableBox label={t('nav.agents')} stack>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('list.name')}</th>
                <th scope="col">{t('list.version')}</th>
                <th scope="col">{t('list.deployed')}</th>
                <th scope="col">{t('list.modified')}</th>
              </tr>
            </thead>
            <tbody>
              {agents.data?.map((d) => {
                const ref = parseResourceUri(d.resource);
                if (!ref) return null;
                const deployed = deployments.data?.filter((x) => x.agentId === ref.id) ?? [];
                return (
                  <tr key={ref.id}>
                    <td data-label={t('list.name')}>
                      <Named
                        name={d.name}
                        id={ref.id}
                        unnamed={t('agent.unnamed')}
                        what={t('id.agent')}
                        to={`${BASE}/agents/${ref.id}`}
                      />
                      {d.description && <div className="muted small">{d.description}</div>}
                    </td>
                    <td data-label={t('list.version')}>{ref.version}</td>
                    <td data-label={t('list.deployed')}>
                      {deployed.length === 0 ? (
                        <span className="muted">{t('list.notDeployed')}</span>
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
                    <td data-label={t('list.modified')}>{formatTime(d.lastModifiedOn)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}
