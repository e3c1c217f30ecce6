/** One agent: its workflows and extensions in pipeline order, versions with a diff, deployments, export, delete. */
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { environments, extensionLabels, useResourceKinds } from '../../api/resources.ts';
import type { Agent, DeploymentStatus, Workflow, WorkflowExtension } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import {
  Badge,
  ConfirmButton,
  Empty,
  ErrorMessage,
  Id,
  Loading,
  Notice,
  PageHeader,
  formatTime,
  saveBlob,
  TableBox,
} from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { keyed } from '../../lib/keys.ts';
import { type StepError, stepErrors, stepKey } from '../../lib/step-errors.ts';
import { parseResourceUri } from '../../lib/uri.ts';
import { BASE, Link, navigate, useLocation } from '../../router.tsx';
import { VersionDiff } from '../resources/VersionDiff.tsx';

export function AgentDetail({ id }: { id: string }) {
  const { api } = useAuth();
  const { canWrite, canConverse } = usePermissions();
  const queryClient = useQueryClient();
  const { search } = useLocation();
  const descriptor = useQuery({ queryKey: ['descriptor', id], queryFn: () => api.descriptor(id) });
  const agentPath = useResourceKinds()?.agent.storePath;
  const current = useQuery({
    queryKey: ['currentversion', agentPath, id],
    queryFn: () => api.currentVersion(agentPath!, id),
    enabled: agentPath !== undefined,
  });
  const [version, setVersion] = useState<number>();
  useEffect(() => {
    if (current.data !== undefined && version === undefined) setVersion(current.data);
  }, [current.data, version]);
  const agent = useQuery({
    queryKey: ['resource', agentPath, id, version],
    queryFn: () => api.read<Agent>(agentPath!, id, version!),
    enabled: version !== undefined && agentPath !== undefined,
  });
  const errors = useStepErrors(id);
  const [exportError, setExportError] = useState<unknown>();
  const [exporting, setExporting] = useState(false);

  const remove = useMutation({
    mutationFn: async () => api.remove(agentPath!, id, current.data!),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['descriptors'] });
      navigate(`${BASE}/agents`);
    },
  });

  const exportAgent = async () => {
    if (version === undefined) return;
    setExporting(true);
    setExportError(undefined);
    try {
      const location = await api.exportAgent(id, version);
      const path = location.startsWith('http') ? new URL(location).pathname : location;
      const blob = await api.download(path);
      saveBlob(blob, path.split('/').pop() || `${id}-${version}.zip`);
    } catch (e) {
      setExportError(e);
    } finally {
      setExporting(false);
    }
  };

  if (current.error)
    return (
      <>
        <PageHeader title={t('agentDetail.agent')} />
        <ErrorMessage error={current.error} />
      </>
    );
  const name = descriptor.data?.name || '(unnamed agent)';
  const versions = current.data ? Array.from({ length: current.data }, (_, i) => current.data! - i) : [];

  return (
    <>
      <PageHeader title={name} description={descriptor.data?.description}>
        {canConverse && (
          <Link className="button primary" to={`${BASE}/chat/${id}`}>
            {t('agentDetail.chat')}
          </Link>
        )}
        {canWrite && (
          <button type="button" onClick={exportAgent} disabled={exporting || version === undefined}>
            {exporting ? t('agentDetail.exporting') : t('agentDetail.export')}
          </button>
        )}
        <Link className="button" to={`${BASE}/resources/agents/${id}`}>
          {canWrite ? t('agentDetail.edit') : t('agentDetail.viewJson')}
        </Link>
        {canWrite && (
          <ConfirmButton
            question={t('agentDetail.deleteThisAgent')}
            onConfirm={() => remove.mutate()}
            disabled={current.data === undefined}
          >
            {t('agentDetail.delete')}
          </ConfirmButton>
        )}
      </PageHeader>
      {search.get('created') && <Notice kind="success">{t('agentDetail.theAgentWasCreated')}</Notice>}
      <ErrorMessage error={exportError} title={t('agentDetail.exportFailed')} />
      <ErrorMessage error={remove.error} title={t('agentDetail.deleteFailed')} />
      <p className="muted small">
        <Id value={id} what={t('id.agent')} />{' '}
        {t('agentDetail.createdModified', {
          time: formatTime(descriptor.data?.createdOn),
          time2: formatTime(descriptor.data?.lastModifiedOn),
        })}
      </p>

      <div className="field narrow">
        <label htmlFor="agent-version">{t('agentDetail.version')}</label>
        <select id="agent-version" value={version ?? ''} onChange={(e) => setVersion(Number(e.target.value))}>
          {versions.map((v) => (
            <option key={v} value={v}>
              {v}
              {v === current.data ? ' (current)' : ''}
            </option>
          ))}
        </select>
      </div>

      {version !== undefined && <Deployments agentId={id} version={version} />}

      <section className="panel" aria-labelledby="pipeline-h">
        <h2 id="pipeline-h">{t('pipeline.title')}</h2>
        <p className="muted small">{t('pipeline.description')}</p>
        <ErrorMessage error={agent.error} />
        {agent.isPending ? (
          <Loading />
        ) : agent.data && agent.data.packages.length === 0 ? (
          <Empty>
            {t('pipeline.empty')} <Link to={`${BASE}/resources/agents/${id}`}>{t('pipeline.emptyAction')}</Link>
          </Empty>
        ) : (
          <ol className="pipeline">
            {keyed(agent.data?.packages ?? [], (uri) => uri).map(({ key, item: uri }) => (
              <WorkflowItem key={key} uri={uri} errors={errors} />
            ))}
          </ol>
        )}
      </section>

      {current.data !== undefined && <VersionDiff storePath={agentPath!} id={id} current={current.data} />}
    </>
  );
}

function Deployments({ agentId, version }: { agentId: string; version: number }) {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const queryClient = useQueryClient();
  const statuses = useQueries({
    queries: environments.map((environment) => ({
      queryKey: ['deploymentstatus', environment, agentId, version],
      queryFn: () => api.deploymentStatus(environment, agentId, version),
      refetchInterval: (q: { state: { data?: DeploymentStatus } }) =>
        q.state.data?.status === 'IN_PROGRESS' ? 700 : 5_000,
    })),
  });
  const all = useQuery({
    queryKey: ['agentdeployments', agentId],
    queryFn: () => api.agentDeployments(agentId),
    refetchInterval: 5_000,
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['deploymentstatus'] }),
      queryClient.invalidateQueries({ queryKey: ['agentdeployments', agentId] }),
      queryClient.invalidateQueries({ queryKey: ['deployments'] }),
    ]);
  const deploy = useMutation({
    mutationFn: (environment: string) => api.deploy(environment, agentId, version),
    onSettled: refresh,
  });
  const undeploy = useMutation({
    mutationFn: ({ environment, v }: { environment: string; v: number }) => api.undeploy(environment, agentId, v),
    onSettled: refresh,
  });

  return (
    <section className="panel" aria-labelledby="deploy-h">
      <h2 id="deploy-h">{t('agentDetail.deployment')}</h2>
      <ErrorMessage error={deploy.error ?? undeploy.error} />
      <TableBox label={t('table.deployment')} stack>
        <table>
          <thead>
            <tr>
              <th scope="col">{t('agentDetail.environment')}</th>
              <th scope="col">{t('agentDetail.version2', { version })}</th>
              <th scope="col">{t('agentDetail.otherVersionsDeployed')}</th>
              {canWrite && (
                <th scope="col">
                  <span className="visually-hidden">{t('agentDetail.actions')}</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {environments.map((environment, i) => {
              const status = statuses[i]?.data;
              const others = (all.data?.environments[environment] ?? []).filter(
                (d) => d.agentVersion !== version && d.status !== 'NOT_FOUND',
              );
              const state = status?.status ?? 'NOT_FOUND';
              return (
                <tr key={environment}>
                  <th scope="row">{environment}</th>
                  <td
                    aria-live="polite"
                    data-testid={`status-${environment}`}
                    data-label={t('deployment.versionColumn', { version })}
                  >
                    <Badge status={state} />
                    {status?.error && <div className="field-error small">{status.error}</div>}
                  </td>
                  <td data-label={t('deployment.others')}>
                    {others.length === 0 ? (
                      <span className="muted">{t('agentDetail.none')}</span>
                    ) : (
                      others.map((d) => (
                        <span key={d.agentVersion} className="nowrap">
                          v{d.agentVersion} <Badge status={d.status} />{' '}
                          {canWrite && (
                            <>
                              <button
                                type="button"
                                className="small"
                                onClick={() => undeploy.mutate({ environment, v: d.agentVersion })}
                              >
                                {t('agentDetail.undeployV', { agentVersion: d.agentVersion })}
                              </button>{' '}
                            </>
                          )}
                        </span>
                      ))
                    )}
                  </td>
                  {canWrite && (
                    <td className="nowrap">
                      {state === 'READY' || state === 'IN_PROGRESS' ? (
                        <button
                          type="button"
                          onClick={() => undeploy.mutate({ environment, v: version })}
                          disabled={undeploy.isPending}
                        >
                          {t('agentDetail.undeployFrom', { environment })}
                        </button>
                      ) : (
                        <button
                          type="button"
                          className="primary"
                          onClick={() => deploy.mutate(environment)}
                          disabled={deploy.isPending}
                        >
                          {t('agentDetail.deployTo', { environment })}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}

/** The resource references of an extension (`config.uri`, `extensions.uri`, a parser's dictionaries). */
function referencesOf(extension: WorkflowExtension): { label: string; uri: string }[] {
  const refs: { label: string; uri: string }[] = [];
  const push = (label: string, uri: unknown) => {
    if (typeof uri === 'string') refs.push({ label, uri });
  };
  push(extensionLabels[extension.type] ?? extension.type, extension.config?.uri);
  push(extensionLabels[extension.type] ?? extension.type, extension.extensions?.uri);
  for (const group of ['dictionaries', 'corrections'] as const) {
    const list = extension.extensions?.[group];
    if (Array.isArray(list)) {
      for (const item of list as { type?: string; config?: { uri?: unknown } }[])
        push(item.type?.split('.').pop() ?? group, item.config?.uri);
    }
  }
  return refs;
}

function ResourceLink({ uri, label }: { uri: string; label: string }) {
  const { api } = useAuth();
  const kinds = useResourceKinds();
  const ref = parseResourceUri(uri);
  const kind = ref && kinds?.byStorePath(ref.storePath);
  const name = useQuery({
    queryKey: ['descriptor', ref?.id],
    queryFn: () => api.descriptor(ref!.id),
    enabled: ref !== undefined,
  });
  if (!ref || !kind) return <code>{uri}</code>;
  return (
    <Link to={`${BASE}/resources/${kind.slug}/${ref.id}?version=${ref.version ?? ''}`}>
      {name.data?.name || `${label}: ${kind.title}`} {t('common.version.short', { version: ref.version ?? '' })}
    </Link>
  );
}

/** The failures of the agent's latest failed conversations, by workflow step (for the pipeline picture). */
function useStepErrors(agentId: string): Map<string, StepError[]> {
  const { api } = useAuth();
  const failed = useQuery({
    queryKey: ['step-errors', agentId],
    queryFn: async () => {
      const list = await api.conversations({ agentId, conversationState: 'ERROR', limit: 10 });
      return stepErrors(await Promise.all(list.map((c) => api.conversation(c.conversationId))));
    },
    refetchInterval: 15_000,
  });
  return failed.data ?? new Map();
}

/** One workflow as a flow of its steps, in the order they run; each step links to its resources and its errors. */
function WorkflowItem({ uri, errors }: { uri: string; errors: Map<string, StepError[]> }) {
  const { api } = useAuth();
  const ref = parseResourceUri(uri);
  const workflow = useQuery({
    queryKey: ['resource', ref?.storePath, ref?.id, ref?.version],
    queryFn: () => api.read<Workflow>(ref!.storePath, ref!.id, ref!.version ?? 1),
    enabled: ref !== undefined,
  });
  const name = useQuery({
    queryKey: ['descriptor', ref?.id],
    queryFn: () => api.descriptor(ref!.id),
    enabled: ref !== undefined,
  });
  return (
    <li className="workflow">
      <h3>
        <Link to={`${BASE}/resources/workflows/${ref?.id}?version=${ref?.version ?? ''}`}>
          {name.data?.name || t('pipeline.workflow')} {t('common.version.short', { version: ref?.version ?? '' })}
        </Link>
      </h3>
      <ErrorMessage error={workflow.error} />
      {workflow.data && workflow.data.packageExtensions.length === 0 && (
        <Empty>
          {t('pipeline.noSteps')} <Link to={`${BASE}/resources/workflows/${ref?.id}`}>{t('pipeline.addSteps')}</Link>
        </Empty>
      )}
      {workflow.data && workflow.data.packageExtensions.length > 0 && (
        <ol
          className="flow extensions"
          aria-label={t('pipeline.steps', { workflow: name.data?.name || t('pipeline.workflow') })}
        >
          {keyed(workflow.data.packageExtensions, (e) => e.type).map(({ key, item: e }) => {
            const failures = ref ? (errors.get(stepKey(ref.id, e.type)) ?? []) : [];
            return (
              <li key={key} className={`flow-step${failures.length > 0 ? ' failing' : ''}`}>
                <strong>{extensionLabels[e.type] ?? e.type}</strong>
                <span className="muted small flow-type">{e.type.replace('svc://', '')}</span>
                {referencesOf(e).length > 0 && (
                  <ul>
                    {referencesOf(e).map((r) => (
                      <li key={r.uri}>
                        <ResourceLink uri={r.uri} label={r.label} />
                      </li>
                    ))}
                  </ul>
                )}
                {failures.length > 0 && (
                  <div className="flow-errors">
                    <Badge status="ERROR" label={t('pipeline.failures', { count: failures.length })} />
                    <ul>
                      {failures.map((f) => (
                        <li key={`${f.conversationId}-${f.step}`}>
                          <span className="flow-reason">{f.reason}</span>{' '}
                          <Link to={`${BASE}/conversations/${f.conversationId}#step-${f.step}`}>
                            {t('pipeline.failureLink', { step: f.step, when: formatTime(f.at) })}
                          </Link>
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </li>
  );
}
