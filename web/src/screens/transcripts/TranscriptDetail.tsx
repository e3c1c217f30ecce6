/**
 * One transcript (a conversation regression test): its steps with the expected value and the comparison of each
 * field, saved as a new version; a run against a chosen agent version; the stored runs.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { COMPARISONS, type Transcript } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Tx } from '../../i18n/Tx.tsx';
import {
  Badge,
  Empty,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  PageHeader,
  Select,
  formatTime,
  TableBox,
  FocusFormButton,
} from '../../components/ui.tsx';
import { BASE, Link, navigate } from '../../router.tsx';
import { rowsOf, withExpectations, type ExpectationRow } from './expectations.ts';

const STORE = '/transcriptstore/transcripts';

export function TranscriptDetail({ id }: { id: string }) {
  const { api } = useAuth();
  const version = useQuery({ queryKey: ['currentversion', STORE, id], queryFn: () => api.currentVersion(STORE, id) });
  const current = version.data;
  const transcript = useQuery({
    queryKey: ['resource', STORE, id, current],
    queryFn: () => api.read<Transcript>(STORE, id, current!),
    enabled: current !== undefined,
  });
  const descriptor = useQuery({ queryKey: ['descriptor', id], queryFn: () => api.descriptor(id) });
  const [savedVersion, setSavedVersion] = useState<number>();

  if (version.error || transcript.error) return <ErrorMessage error={version.error ?? transcript.error} />;
  if (current === undefined || !transcript.data) return <Loading />;
  return (
    <>
      <PageHeader
        title={descriptor.data?.name || t('transcriptDetail.transcript')}
        description={
          <>
            {t('transcriptDetail.aConversationRegressionTest', { current })}
            {transcript.data.agentId && (
              <>
                {' '}
                <Tx
                  k="transcriptDetail.recordedFromAgent"
                  values={{
                    agent: (
                      <Link to={`${BASE}/agents/${transcript.data.agentId}`}>{t('transcriptDetail.itsAgent')}</Link>
                    ),
                    version: transcript.data.agentVersion,
                  }}
                />
              </>
            )}
            .
          </>
        }
      >
        <Link className="button" to={`${BASE}/resources/transcripts/${id}`}>
          {t('transcriptDetail.editAsJson')}
        </Link>
      </PageHeader>
      <RunForm id={id} version={current} transcript={transcript.data} />
      {savedVersion === current && <Notice kind="success">{t('transcriptDetail.savedAsVersion', { current })}</Notice>}
      <Expectations key={current} id={id} version={current} transcript={transcript.data} onSaved={setSavedVersion} />
      <RunList id={id} />
    </>
  );
}

function Expectations({
  id,
  version,
  transcript,
  onSaved,
}: {
  id: string;
  version: number;
  transcript: Transcript;
  onSaved: (version: number) => void;
}) {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const queryClient = useQueryClient();
  const steps = [...(transcript.start ? [{ ...transcript.start, input: '' }] : []), ...transcript.turns];
  const offset = transcript.start ? 0 : 1;
  const [rows, setRows] = useState(() => steps.map((step) => rowsOf(step.expected)));
  const save = useMutation({
    mutationFn: () => {
      const edited = transcript.start ? rows : [[], ...rows];
      return api.update(STORE, id, version, withExpectations(transcript, edited));
    },
    onSuccess: async () => {
      onSaved(version + 1);
      await queryClient.invalidateQueries({ queryKey: ['currentversion', STORE, id] });
    },
  });
  const change = (stepIndex: number, rowIndex: number, patch: Partial<ExpectationRow>) => {
    setRows((all) =>
      all.map((stepRows, i) =>
        i !== stepIndex ? stepRows : stepRows.map((row, j) => (j === rowIndex ? { ...row, ...patch } : row)),
      ),
    );
  };

  return (
    <form
      className="panel"
      aria-labelledby="expectations-h"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <h2 id="expectations-h">{t('transcriptDetail.expectedResults')}</h2>
      <p className="muted">{t('transcriptDetail.perStepAndField')}</p>
      {steps.map((step, stepIndex) => {
        const number = stepIndex + offset;
        const title =
          number === 0
            ? t('transcriptDetail.step0ConversationStart')
            : t('transcriptDetail.step', { number, input: step.input });
        return (
          <fieldset key={title} className="transcript-step" disabled={!canWrite}>
            <legend>{title}</legend>
            {rows[stepIndex]!.map((row, rowIndex) => (
              <div key={row.field} className="toolbar expectation" data-field={row.field}>
                <Select
                  label={t('transcriptDetail.comparison', { field: row.field })}
                  value={row.compare}
                  onChange={(compare) => change(stepIndex, rowIndex, { compare: compare as ExpectationRow['compare'] })}
                  options={[{ value: '', label: t('transcriptDetail.notChecked') }, ...COMPARISONS]}
                />
                {row.compare !== '' && row.compare !== 'ignore' && row.compare !== 'judge' && (
                  <Field
                    label={t('transcriptDetail.expected', { field: row.field })}
                    value={row.value}
                    onChange={(value) => change(stepIndex, rowIndex, { value })}
                  />
                )}
                {row.compare === 'tolerance' && (
                  <Field
                    label={t('transcriptDetail.tolerance', { field: row.field })}
                    type="number"
                    value={row.tolerance}
                    onChange={(tolerance) => change(stepIndex, rowIndex, { tolerance })}
                  />
                )}
                {row.compare === 'judge' && (
                  <Field
                    label={t('transcriptDetail.rubric', { field: row.field })}
                    value={row.rubric}
                    onChange={(rubric) => change(stepIndex, rowIndex, { rubric })}
                  />
                )}
              </div>
            ))}
          </fieldset>
        );
      })}
      {canWrite && (
        <button type="submit" className="primary" disabled={save.isPending}>
          {t('transcriptDetail.saveAsANew')}
        </button>
      )}
      <ErrorMessage error={save.error} />
    </form>
  );
}

function RunForm({ id, version, transcript }: { id: string; version: number; transcript: Transcript }) {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const { canWrite } = usePermissions();
  const [agentId, setAgentId] = useState(transcript.agentId ?? '');
  const [agentVersion, setAgentVersion] = useState('');
  const [mode, setMode] = useState('recorded');
  const agentVersions = useQuery({
    queryKey: ['currentversion', '/agentstore/agents', agentId],
    queryFn: () => api.currentVersion('/agentstore/agents', agentId),
    enabled: /^[0-9a-f]{24}$/.test(agentId),
  });
  const newest = agentVersions.data;
  useEffect(() => {
    if (newest !== undefined && agentVersion === '') setAgentVersion(String(newest));
  }, [newest, agentVersion]);
  const run = useMutation({
    mutationFn: () => api.runTranscript(id, version, { agentId, agentVersion: Number(agentVersion), mode }),
    onSuccess: async (result) => {
      await queryClient.invalidateQueries({ queryKey: ['transcript-runs', id] });
      navigate(`${BASE}/transcripts/${id}/runs/${result.id}`);
    },
  });
  if (!canWrite) return null;
  return (
    <form
      id="run-form"
      className="panel toolbar"
      aria-label={t('transcriptDetail.runTheTranscript')}
      onSubmit={(event) => {
        event.preventDefault();
        run.mutate();
      }}
    >
      <Field label={t('transcriptDetail.agentId')} value={agentId} onChange={setAgentId} />
      <Select
        label={t('transcriptDetail.agentVersion')}
        value={agentVersion}
        onChange={setAgentVersion}
        options={Array.from({ length: newest ?? 0 }, (_, i) => String((newest ?? 0) - i))}
      />
      <Select
        label={t('transcriptDetail.externalCalls')}
        value={mode}
        onChange={setMode}
        options={[
          { value: 'recorded', label: t('transcriptDetail.modeRecorded') },
          { value: 'live-llm', label: t('transcriptDetail.modeLiveLlm') },
          { value: 'live', label: t('transcriptDetail.modeLive') },
        ]}
      />
      <button type="submit" className="primary" disabled={run.isPending || agentVersion === ''}>
        {run.isPending ? t('transcriptDetail.running') : t('transcriptDetail.run')}
      </button>
      <ErrorMessage error={run.error ?? agentVersions.error} />
    </form>
  );
}

function RunList({ id }: { id: string }) {
  const { api } = useAuth();
  const runs = useQuery({ queryKey: ['transcript-runs', id], queryFn: () => api.transcriptRuns(id) });
  return (
    <section className="panel" aria-labelledby="runs-h">
      <h2 id="runs-h">{t('transcriptDetail.runs')}</h2>
      <ErrorMessage error={runs.error} />
      {runs.data?.length === 0 && (
        <Empty>
          {t('transcriptDetail.noRunsYet')}{' '}
          <FocusFormButton formId="run-form">{t('transcriptDetail.runFirst')}</FocusFormButton>
        </Empty>
      )}
      {runs.data && runs.data.length > 0 && (
        <TableBox label={t('table.runs')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('transcriptDetail.run')}</th>
                <th scope="col">{t('transcriptDetail.result')}</th>
                <th scope="col">{t('transcriptDetail.agentVersion')}</th>
                <th scope="col">{t('transcriptDetail.calls')}</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.map((run) => (
                <tr key={run.id}>
                  <td>
                    <Link to={`${BASE}/transcripts/${id}/runs/${run.id}`}>{formatTime(run.startedOn)}</Link>
                  </td>
                  <td>
                    <Badge
                      status={run.passed ? 'READY' : 'ERROR'}
                      label={run.passed ? t('run.passed') : t('run.failed')}
                    />
                  </td>
                  <td>{run.agentVersion}</td>
                  <td>{run.mode}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}
