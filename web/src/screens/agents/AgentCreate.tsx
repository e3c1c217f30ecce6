/**
 * New agent: a guided form (words -> intents, intent -> action, action -> reply) that creates the dictionary,
 * behavior set, output set, workflow and agent; or a blank agent with one empty workflow.
 */
import { t } from '../../i18n/index.ts';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useResourceKinds } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { ErrorMessage, Field, PageHeader, Select } from '../../components/ui.tsx';
import {
  blankForm,
  createBlankAgent,
  createSimpleAgent,
  exampleForm,
  validateForm,
  type CreationPorts,
  type FormProblem,
  type SimpleAgentForm,
} from '../../lib/agent-builder.ts';
import { parseResourceUri } from '../../lib/uri.ts';
import { BASE, navigate } from '../../router.tsx';
import { ReadOnlyNote } from '../resources/ResourceEditor.tsx';

type Mode = 'guided' | 'blank';

export function AgentCreate() {
  const { canWrite } = usePermissions();
  return canWrite ? (
    <AgentCreateForm />
  ) : (
    <>
      <PageHeader title={t('agentCreate.newAgent')} />
      <ReadOnlyNote />
    </>
  );
}

function AgentCreateForm() {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<Mode>('guided');
  const [form, setForm] = useState<SimpleAgentForm>(exampleForm);
  const rowKeys = {
    intents: useRowKeys(form.intents.length),
    rules: useRowKeys(form.rules.length),
    replies: useRowKeys(form.replies.length),
  };
  const [problems, setProblems] = useState<FormProblem[]>([]);
  const [progress, setProgress] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const kinds = useResourceKinds();
  const ports: CreationPorts = {
    create: (kind, body) => {
      if (!kinds) throw new Error(t('agentCreate.theConfigurationKindsAre'));
      return api.create(kinds.named(kind).storePath, body);
    },
    describe: async (uri, name, description) => {
      const ref = parseResourceUri(uri);
      if (ref) await api.describe(ref.id, ref.version, { name, description });
    },
  };

  const errorOf = (field: string) => problems.find((p) => p.field === field)?.message;

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const found =
      mode === 'guided'
        ? validateForm(form)
        : form.name.trim() === ''
          ? [{ field: 'name', message: t('agentCreate.giveTheAgentA') }]
          : [];
    setProblems(found);
    if (found.length > 0) {
      document.getElementById('form-problems')?.focus();
      return;
    }
    setBusy(true);
    try {
      const created =
        mode === 'guided'
          ? await createSimpleAgent(form, ports, setProgress)
          : await createBlankAgent(form.name.trim(), form.description.trim(), ports);
      await queryClient.invalidateQueries({ queryKey: ['descriptors'] });
      const ref = parseResourceUri(created.agentUri);
      navigate(`${BASE}/agents/${ref?.id ?? ''}?created=1`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      setProgress('');
    }
  };

  type RowList = 'intents' | 'rules' | 'replies';
  /** Adds a row at the end of one of the guided form's lists, keeping the other rows' React keys. */
  const addRow = <L extends RowList>(list: L, row: SimpleAgentForm[L][number]) => {
    update((d) => {
      (d[list] as SimpleAgentForm[L][number][]).push(row);
    });
    rowKeys[list].added();
  };
  const removeRow = (list: RowList, index: number) => {
    update((d) => {
      d[list].splice(index, 1);
    });
    rowKeys[list].removed(index);
  };

  const update = (change: (draft: SimpleAgentForm) => void) => {
    const draft = structuredClone(form);
    change(draft);
    setForm(draft);
    // Once problems are shown, they follow the edits (a fixed field loses its message at once).
    if (problems.length > 0 && mode === 'guided') setProblems(validateForm(draft));
    if (problems.length > 0 && mode === 'blank') setProblems(draft.name.trim() === '' ? problems : []);
  };

  const intents = form.intents.map((r) => r.intent.trim()).filter(Boolean);
  const actions = form.rules.map((r) => r.action.trim()).filter(Boolean);

  return (
    <>
      <PageHeader title={t('agentCreate.newAgent')} description={t('agentCreate.describeWhatPeopleSay')} />
      <fieldset className="segmented">
        <legend className="visually-hidden">{t('agentCreate.kindOfAgent')}</legend>
        <label>
          <input type="radio" name="mode" checked={mode === 'guided'} onChange={() => setMode('guided')} />{' '}
          {t('agentCreate.guidedSimpleAgent')}
        </label>
        <label>
          <input type="radio" name="mode" checked={mode === 'blank'} onChange={() => setMode('blank')} />{' '}
          {t('agentCreate.blankAgent')}
        </label>
      </fieldset>

      <form onSubmit={submit} noValidate aria-describedby="form-problems">
        {problems.length > 0 && (
          <div id="form-problems" className="message error" role="alert" tabIndex={-1}>
            <strong>{problems.length === 1 ? t('agentCreate.fixThis') : t('agentCreate.fixThese')}</strong>
            <ul>
              {problems.map((p) => (
                <li key={p.field + p.message}>{p.message}</li>
              ))}
            </ul>
          </div>
        )}

        <section className="panel" aria-labelledby="about-h">
          <h2 id="about-h">{t('agentCreate.aboutTheAgent')}</h2>
          <div className="grid-2">
            <Field
              label={t('agentCreate.name')}
              value={form.name}
              onChange={(v) =>
                update((d) => {
                  d.name = v;
                })
              }
              required
              error={errorOf('name')}
            />
            <Field
              label={t('agentCreate.description')}
              value={form.description}
              onChange={(v) =>
                update((d) => {
                  d.description = v;
                })
              }
            />
          </div>
          {mode === 'guided' && (
            <Field
              label={t('agentCreate.welcomeMessage')}
              value={form.welcome}
              onChange={(v) =>
                update((d) => {
                  d.welcome = v;
                })
              }
              hint={t('agentCreate.saidWhenAConversation')}
            />
          )}
        </section>

        {mode === 'guided' && (
          <>
            <section className="panel" aria-labelledby="intents-h">
              <h2 id="intents-h">{t('agentCreate.1WhatPeopleSay')}</h2>
              <p className="muted">{t('agentCreate.eachIntentIsRecognised')}</p>
              {form.intents.map((row, i) => (
                <fieldset className="row-edit" key={rowKeys.intents.keys[i]}>
                  <legend className="visually-hidden">{t('agentCreate.intent', { number: i + 1 })}</legend>
                  <Field
                    label={t('agentCreate.intentName', { number: i + 1 })}
                    value={row.intent}
                    onChange={(v) =>
                      update((d) => {
                        d.intents[i]!.intent = v;
                      })
                    }
                    placeholder={t('agentCreate.greeting')}
                    error={errorOf(`intents.${i}.intent`)}
                  />
                  <Field
                    label={t('agentCreate.intentWords', { number: i + 1 })}
                    value={row.words}
                    onChange={(v) =>
                      update((d) => {
                        d.intents[i]!.words = v;
                      })
                    }
                    placeholder={t('agentCreate.helloHiGoodMorning')}
                    error={errorOf(`intents.${i}.words`)}
                  />
                  <button
                    type="button"
                    className="icon"
                    aria-label={t('agentCreate.removeIntent', { number: i + 1 })}
                    onClick={() => removeRow('intents', i)}
                  >
                    {t('agentCreate.remove')}
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('intents', { intent: '', words: '' })}>
                {t('agentCreate.addIntent')}
              </button>
              <div className="field narrow">
                <Select
                  label={t('agentCreate.tolerateTypos')}
                  value={String(form.typoDistance)}
                  onChange={(v) =>
                    update((d) => {
                      d.typoDistance = Number(v);
                    })
                  }
                  options={[
                    { value: '0', label: 'No' },
                    { value: '1', label: t('agentCreate.oneLetterOff') },
                    { value: '2', label: t('agentCreate.twoLettersOff') },
                  ]}
                />
              </div>
            </section>

            <section className="panel" aria-labelledby="rules-h">
              <h2 id="rules-h">{t('agentCreate.2WhatTheAgent')}</h2>
              <p className="muted">{t('agentCreate.whenAnIntentIs')}</p>
              <datalist id="intent-names">
                {intents.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
              {form.rules.map((row, i) => (
                <fieldset className="row-edit" key={rowKeys.rules.keys[i]}>
                  <legend className="visually-hidden">{t('agentCreate.rule', { number: i + 1 })}</legend>
                  <RowInput
                    label={t('agentCreate.ruleWhenIntent', { number: i + 1 })}
                    list="intent-names"
                    value={row.intent}
                    onChange={(v) =>
                      update((d) => {
                        d.rules[i]!.intent = v;
                      })
                    }
                    error={errorOf(`rules.${i}.intent`)}
                  />
                  <RowInput
                    label={t('agentCreate.ruleThenAction', { number: i + 1 })}
                    value={row.action}
                    onChange={(v) =>
                      update((d) => {
                        d.rules[i]!.action = v;
                      })
                    }
                    error={errorOf(`rules.${i}.action`)}
                  />
                  <button
                    type="button"
                    className="icon"
                    aria-label={t('agentCreate.removeRule', { number: i + 1 })}
                    onClick={() => removeRow('rules', i)}
                  >
                    {t('agentCreate.remove')}
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('rules', { intent: '', action: '' })}>
                {t('agentCreate.addRule')}
              </button>
            </section>

            <section className="panel" aria-labelledby="replies-h">
              <h2 id="replies-h">{t('agentCreate.3WhatTheAgent')}</h2>
              <p className="muted">{t('agentCreate.theReplyForEach')}</p>
              <datalist id="action-names">
                {actions.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
              {form.replies.map((row, i) => (
                <fieldset className="row-edit three" key={rowKeys.replies.keys[i]}>
                  <legend className="visually-hidden">{t('agentCreate.reply', { number: i + 1 })}</legend>
                  <RowInput
                    label={t('agentCreate.replyForAction', { number: i + 1 })}
                    list="action-names"
                    value={row.action}
                    onChange={(v) =>
                      update((d) => {
                        d.replies[i]!.action = v;
                      })
                    }
                    error={errorOf(`replies.${i}.action`)}
                  />
                  <RowInput
                    label={t('agentCreate.replyText', { number: i + 1 })}
                    value={row.text}
                    onChange={(v) =>
                      update((d) => {
                        d.replies[i]!.text = v;
                      })
                    }
                    error={errorOf(`replies.${i}.text`)}
                  />
                  <RowInput
                    label={t('agentCreate.replyQuickReplies', { number: i + 1 })}
                    value={row.quickReplies}
                    onChange={(v) =>
                      update((d) => {
                        d.replies[i]!.quickReplies = v;
                      })
                    }
                  />
                  <button
                    type="button"
                    className="icon"
                    aria-label={t('agentCreate.removeReply', { number: i + 1 })}
                    onClick={() => removeRow('replies', i)}
                  >
                    {t('agentCreate.remove')}
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('replies', { action: '', text: '', quickReplies: '' })}>
                {t('agentCreate.addReply')}
              </button>
            </section>
            <p className="muted">{t('agentCreate.theWorkflowRunsParser')}</p>
          </>
        )}
        {mode === 'blank' && <p className="muted">{t('agentCreate.aBlankAgentGets')}</p>}

        <ErrorMessage error={error} title={t('agentCreate.theAgentCouldNot')} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t('agentCreate.creating') : t('agentCreate.createAgent')}
          </button>
          {mode === 'guided' && (
            <button
              type="button"
              onClick={() => {
                const blank = blankForm();
                setForm(blank);
                rowKeys.intents.reset(blank.intents.length);
                rowKeys.rules.reset(blank.rules.length);
                rowKeys.replies.reset(blank.replies.length);
                setProblems([]);
              }}
            >
              {t('agentCreate.clearTheForm')}
            </button>
          )}
          <span role="status" aria-live="polite" className="muted">
            {progress}
          </span>
        </div>
      </form>
    </>
  );
}

let lastRowKey = 0;
const newRowKeys = (count: number) => Array.from({ length: count }, () => ++lastRowKey);

/** React keys for the rows of an editable list, kept in step with its additions and removals. */
function useRowKeys(initialCount: number) {
  const [keys, setKeys] = useState(() => newRowKeys(initialCount));
  return {
    keys,
    added: () => setKeys((k) => [...k, ...newRowKeys(1)]),
    removed: (index: number) => setKeys((k) => k.filter((_, j) => j !== index)),
    reset: (count: number) => setKeys(newRowKeys(count)),
  };
}

function RowInput({
  label,
  value,
  onChange,
  list,
  error,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  list?: string;
  error?: string;
}) {
  const id = `f-${label.replace(/\W+/g, '-')}`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        list={list}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-e` : undefined}
      />
      {error && (
        <small id={`${id}-e`} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}
