/** Managed-agent triggers: an intent mapped to agent deployments (one conversation per user and intent). */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { environments } from '../../api/resources.ts';
import type { BotTrigger } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  ConfirmButton,
  Empty,
  FocusFormButton,
  ErrorMessage,
  Field,
  Loading,
  PageHeader,
  Select,
  TableBox,
} from '../../components/ui.tsx';
import { BASE, Link } from '../../router.tsx';
import { agentLabel, useAgentNames } from '../agents/useAgentNames.ts';

interface Row {
  /** A React key that stays with the row while rows are added and removed. */
  key: number;
  environment: string;
  botId: string;
  context: string;
}

let lastRowKey = 0;
const newRow = (values: Omit<Row, 'key'> = { environment: 'production', botId: '', context: '' }): Row => ({
  key: ++lastRowKey,
  ...values,
});

export function Triggers() {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const queryClient = useQueryClient();
  const names = useAgentNames();
  const triggers = useQuery({ queryKey: ['triggers'], queryFn: api.triggers });
  const [editing, setEditing] = useState<string>();
  const [intent, setIntent] = useState('');
  const [rows, setRows] = useState<Row[]>(() => [newRow()]);
  const [formError, setFormError] = useState<string>();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['triggers'] });
  const save = useMutation({
    mutationFn: (trigger: BotTrigger) => (editing ? api.updateTrigger(trigger) : api.createTrigger(trigger)),
    onSuccess: () => {
      reset();
      return refresh();
    },
  });
  const remove = useMutation({ mutationFn: (i: string) => api.deleteTrigger(i), onSettled: refresh });
  const agentOptions = [
    { value: '', label: t('triggers.chooseAnAgent') },
    ...[...names.entries()].map(([id, name]) => ({ value: id, label: name || agentLabel(names, id) })),
  ];

  function reset() {
    setEditing(undefined);
    setIntent('');
    setRows([newRow()]);
    setFormError(undefined);
  }

  const edit = (t: BotTrigger) => {
    setEditing(t.intent);
    setIntent(t.intent);
    setRows(
      t.botDeployments.map((d) =>
        newRow({
          environment: d.environment,
          botId: d.botId,
          context: d.initialContext ? JSON.stringify(d.initialContext) : '',
        }),
      ),
    );
  };

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    if (intent.trim() === '') return setFormError(t('triggers.nameTheIntent'));
    if (rows.some((r) => r.botId === '')) return setFormError(t('triggers.chooseAnAgentFor'));
    try {
      const botDeployments = rows.map((r) => ({
        environment: r.environment,
        botId: r.botId,
        ...(r.context.trim() ? { initialContext: JSON.parse(r.context) } : {}),
      }));
      setFormError(undefined);
      save.mutate({ intent: intent.trim(), botDeployments });
    } catch {
      setFormError(t('triggers.theInitialContextMust'));
    }
  };

  return (
    <>
      <PageHeader
        title={t('triggers.triggers')}
        description={
          <>
            {t('triggers.aTriggerMapsAn')} <code>{t('triggers.managedbotsLtIntentGt')}</code>{' '}
            {t('triggers.thenKeepsOneConversation')}
          </>
        }
      />
      {canWrite && (
        <form id="trigger-form" className="panel" onSubmit={submit} aria-labelledby="trigger-h">
          <h2 id="trigger-h">{editing ? t('triggers.editTrigger', { editing }) : t('triggers.newTrigger')}</h2>
          {formError && (
            <div className="message error" role="alert">
              {formError}
            </div>
          )}
          <Field label={t('triggers.intent')} value={intent} onChange={setIntent} required />
          {rows.map((r, i) => (
            <fieldset key={r.key} className="row-edit three">
              <legend className="visually-hidden">{t('triggers.deployment', { number: i + 1 })}</legend>
              <Select
                label={t('triggers.deploymentEnvironment', { number: i + 1 })}
                value={r.environment}
                onChange={(v) => setRows(rows.map((x, j) => (j === i ? { ...x, environment: v } : x)))}
                options={[...environments]}
              />
              <Select
                label={t('triggers.deploymentAgent', { number: i + 1 })}
                value={r.botId}
                onChange={(v) => setRows(rows.map((x, j) => (j === i ? { ...x, botId: v } : x)))}
                options={agentOptions}
              />
              <Field
                label={t('triggers.deploymentInitialContextJson', { number: i + 1 })}
                value={r.context}
                onChange={(v) => setRows(rows.map((x, j) => (j === i ? { ...x, context: v } : x)))}
              />
              <button
                type="button"
                className="icon"
                aria-label={t('triggers.removeDeployment', { number: i + 1 })}
                onClick={() => setRows(rows.filter((_, j) => j !== i))}
                disabled={rows.length === 1}
              >
                {t('triggers.remove')}
              </button>
            </fieldset>
          ))}
          <button type="button" onClick={() => setRows([...rows, newRow()])}>
            {t('triggers.addDeployment')}
          </button>
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {editing ? t('triggers.saveTrigger') : t('triggers.createTrigger')}
            </button>
            {editing && (
              <button type="button" onClick={reset}>
                {t('triggers.cancel')}
              </button>
            )}
          </div>
          <ErrorMessage error={save.error} />
        </form>
      )}
      <section className="panel" aria-labelledby="triggers-h">
        <h2 id="triggers-h">{t('triggers.triggers')}</h2>
        <ErrorMessage error={triggers.error ?? remove.error} />
        {triggers.isPending ? (
          <Loading />
        ) : triggers.data?.length === 0 ? (
          <Empty>
            {t('triggers.empty')} <FocusFormButton formId="trigger-form">{t('triggers.emptyAction')}</FocusFormButton>
          </Empty>
        ) : (
          <TableBox label={t('nav.triggers')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('triggers.intent')}</th>
                  <th scope="col">{t('triggers.deployments')}</th>
                  {canWrite && (
                    <th scope="col">
                      <span className="visually-hidden">{t('triggers.actions')}</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {triggers.data?.map((trigger) => (
                  <tr key={trigger.intent}>
                    <td>
                      <code>{trigger.intent}</code>
                    </td>
                    <td>
                      {trigger.botDeployments.map((d, i) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: a deployment may repeat (repeats weight the random choice), so no field is unique; these rows are stateless text redrawn from the fetched trigger
                        <div key={i}>
                          <Link to={`${BASE}/agents/${d.botId}`}>{agentLabel(names, d.botId)}</Link>{' '}
                          <span className="muted">({d.environment})</span>
                        </div>
                      ))}
                    </td>
                    {canWrite && (
                      <td className="nowrap">
                        <button type="button" onClick={() => edit(trigger)}>
                          {t('triggers.edit')}
                        </button>{' '}
                        <ConfirmButton
                          question={t('triggers.delete2', { intent: trigger.intent })}
                          onConfirm={() => remove.mutate(trigger.intent)}
                        >
                          {t('triggers.delete')}
                        </ConfirmButton>
                      </td>
                    )}
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
