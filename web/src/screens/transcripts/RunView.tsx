/** One run of a transcript: per step and field, the expected and the actual value side by side, and the diff. */
import { useQuery } from '@tanstack/react-query';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Badge, ErrorMessage, Loading, PageHeader, formatTime, TableBox } from '../../components/ui.tsx';
import { BASE, Link } from '../../router.tsx';

const show = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value, null, 2));

export function RunView({ id, runId }: { id: string; runId: string }) {
  const { api } = useAuth();
  const run = useQuery({ queryKey: ['transcript-run', id, runId], queryFn: () => api.transcriptRun(id, runId) });
  if (run.error) return <ErrorMessage error={run.error} />;
  if (!run.data) return <Loading />;
  const r = run.data;
  const failed = r.steps.filter((step) => !step.passed).length;
  return (
    <>
      <PageHeader
        title={t('runView.runOf', { transcript: r.transcriptName || 'transcript' })}
        description={
          <>
            {t('runView.againstAgentVCalls', {
              agentVersion: r.agentVersion,
              mode: r.mode,
              time: formatTime(r.startedOn),
            })}{' '}
            <Badge status={r.passed ? 'READY' : 'ERROR'} label={r.passed ? 'passed' : `${failed} step(s) failed`} />
          </>
        }
      >
        <Link className="button" to={`${BASE}/transcripts/${id}`}>
          {t('runView.backToTheTranscript')}
        </Link>
        {r.conversationId && (
          <Link className="button" to={`${BASE}/conversations/${r.conversationId}`}>
            {t('runView.replayedConversation')}
          </Link>
        )}
      </PageHeader>
      {r.error && <p className="message error">{r.error}</p>}
      {r.steps.map((step) => (
        <section
          key={step.step}
          className="panel"
          aria-labelledby={`step-${step.step}`}
          data-passed={String(step.passed)}
        >
          <h2 id={`step-${step.step}`}>
            {step.step === 0
              ? t('runView.step0ConversationStart')
              : t('runView.step', { step: step.step, input: step.input })}{' '}
            <Badge status={step.passed ? 'READY' : 'ERROR'} label={step.passed ? t('run.passed') : t('run.failed')} />
          </h2>
          <TableBox label={t('table.runStep', { step: step.step })}>
            <table className="run-diff">
              <thead>
                <tr>
                  <th scope="col">{t('runView.field')}</th>
                  <th scope="col">{t('runView.comparison')}</th>
                  <th scope="col">{t('runView.expected')}</th>
                  <th scope="col">{t('runView.actual')}</th>
                  <th scope="col">{t('runView.result')}</th>
                </tr>
              </thead>
              <tbody>
                {step.fields.map((field, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a stored run never changes; a field name may repeat (several recording mismatches)
                  <tr key={i} className={field.passed ? 'passed' : 'failed'}>
                    <th scope="row">{field.field}</th>
                    <td>{field.compare}</td>
                    <td>
                      <pre>{show(field.expected)}</pre>
                    </td>
                    <td>
                      <pre>{show(field.actual)}</pre>
                    </td>
                    <td>
                      <Badge
                        status={field.passed ? 'READY' : 'ERROR'}
                        label={field.passed ? t('run.passed') : t('run.failed')}
                      />
                      {field.diff && <pre className="field-diff">{field.diff}</pre>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </section>
      ))}
    </>
  );
}
