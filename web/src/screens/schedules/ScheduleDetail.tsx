/**
 * One schedule: when it runs and what it sends, switching it on and off (a new version), and its run history
 * (due time, conversation, outcome), refreshed while the screen is open.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schedule } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  Badge,
  Empty,
  ErrorMessage,
  Loading,
  Named,
  PageHeader,
  TableBox,
  formatTime,
  shortId,
} from '../../components/ui.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';
import { BASE, Link } from '../../router.tsx';

const STORE = '/schedulestore/schedules';
const REFRESH_MILLIS = 5000;

function timingOf(schedule: Schedule): string {
  return schedule.cron !== undefined
    ? t('scheduleDetail.cron', { cron: schedule.cron, timeZone: schedule.timeZone ?? 'UTC' })
    : t('scheduleDetail.every', { seconds: schedule.intervalSeconds });
}

export function ScheduleDetail({ id }: { id: string }) {
  const { api } = useAuth();
  const names = useAgentNames();
  const { canWrite } = usePermissions();
  const queryClient = useQueryClient();
  const version = useQuery({ queryKey: ['currentversion', STORE, id], queryFn: () => api.currentVersion(STORE, id) });
  const current = version.data;
  const schedule = useQuery({
    queryKey: ['resource', STORE, id, current],
    queryFn: () => api.read<Schedule>(STORE, id, current!),
    enabled: current !== undefined,
  });
  const descriptor = useQuery({ queryKey: ['descriptor', id], queryFn: () => api.descriptor(id) });
  const history = useQuery({
    queryKey: ['schedule-history', id],
    queryFn: () => api.scheduleHistory(id),
    refetchInterval: REFRESH_MILLIS,
  });
  const toggle = useMutation({
    mutationFn: () => api.update(STORE, id, current!, { ...schedule.data!, enabled: schedule.data!.enabled === false }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['currentversion', STORE, id] });
      await queryClient.invalidateQueries({ queryKey: ['schedule-history', id] });
    },
  });

  if (version.error || schedule.error) return <ErrorMessage error={version.error ?? schedule.error} />;
  if (current === undefined || !schedule.data) return <Loading />;
  const body = schedule.data;
  const enabled = body.enabled !== false;
  return (
    <>
      <PageHeader
        title={descriptor.data?.name || t('scheduleDetail.schedule')}
        description={t('scheduleDetail.aScheduleVersion', { current })}
      >
        {canWrite && (
          <button type="button" onClick={() => toggle.mutate()} disabled={toggle.isPending}>
            {enabled ? t('scheduleDetail.disable') : t('scheduleDetail.enable')}
          </button>
        )}
        <Link className="button" to={`${BASE}/resources/schedules/${id}`}>
          {t('scheduleDetail.editAsJson')}
        </Link>
      </PageHeader>
      <ErrorMessage error={toggle.error} />
      <section className="panel" aria-labelledby="schedule-h">
        <h2 id="schedule-h">{t('scheduleDetail.whatItSendsAnd')}</h2>
        <dl className="summary">
          <dt>{t('scheduleDetail.state')}</dt>
          <dd>
            <Badge
              status={enabled ? 'READY' : 'ENDED'}
              label={enabled ? t('scheduleDetail.enabled') : t('scheduleDetail.disabled')}
            />
          </dd>
          <dt>{t('scheduleDetail.when')}</dt>
          <dd data-testid="schedule-timing">{timingOf(body)}</dd>
          <dt>{t('scheduleDetail.nextRun')}</dt>
          <dd data-testid="schedule-next-run">
            {history.data?.nextRunOn === undefined ? '—' : formatTime(history.data.nextRunOn)}
          </dd>
          <dt>{t('scheduleDetail.agent')}</dt>
          <dd>
            <Named
              name={names.get(body.agentId)}
              id={body.agentId}
              unnamed={t('agent.unnamed')}
              what={t('id.agent')}
              to={`${BASE}/agents/${body.agentId}`}
            />{' '}
            {t('scheduleDetail.in')} {body.environment ?? 'production'}
          </dd>
          <dt>{t('scheduleDetail.message')}</dt>
          <dd>{body.message}</dd>
          <dt>{t('scheduleDetail.conversation')}</dt>
          <dd>{body.conversation === 'persistent' ? t('scheduleDetail.persistent') : t('scheduleDetail.newPerRun')}</dd>
          <dt>{t('scheduleDetail.missedRuns')}</dt>
          <dd>{body.missedRuns === 'catchUp' ? t('scheduleDetail.caughtUp') : t('scheduleDetail.skipped')}</dd>
        </dl>
      </section>
      <section className="panel" aria-labelledby="runs-h">
        <h2 id="runs-h">{t('scheduleDetail.runs')}</h2>
        <ErrorMessage error={history.error} />
        {history.data?.runs.length === 0 && <Empty>{t('scheduleDetail.noRunsYet')}</Empty>}
        {history.data && history.data.runs.length > 0 && (
          <TableBox label={t('table.runs')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('scheduleDetail.due')}</th>
                  <th scope="col">{t('scheduleDetail.outcome')}</th>
                  <th scope="col">{t('scheduleDetail.conversation')}</th>
                  <th scope="col" className="hide-narrow">
                    {t('scheduleDetail.detail')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {history.data.runs.map((run) => (
                  <tr key={run.id}>
                    <td>{formatTime(run.dueOn)}</td>
                    <td>
                      <Badge status={run.outcome} />
                    </td>
                    <td>
                      {run.conversationId && (
                        <Link to={`${BASE}/conversations/${run.conversationId}`}>{shortId(run.conversationId)}</Link>
                      )}
                    </td>
                    <td className="hide-narrow">{run.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
      </section>
    </>
  );
}
