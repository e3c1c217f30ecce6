/**
 * New agent: a guided form (words -> intents, intent -> action, action -> reply) that creates the dictionary,
 * behavior set, output set, workflow and agent; or a blank agent with one empty workflow.
 */
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
      <PageHeader title="New agent" />
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
      if (!kinds) throw new Error('The configuration kinds are still loading; try again.');
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
          ? [{ field: 'name', message: 'Give the agent a name.' }]
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
      <PageHeader
        title="New agent"
        description="Describe what people say and how the agent answers; the manager creates the configuration resources for you."
      />
      <fieldset className="segmented">
        <legend className="visually-hidden">Kind of agent</legend>
        <label>
          <input type="radio" name="mode" checked={mode === 'guided'} onChange={() => setMode('guided')} /> Guided
          (simple agent)
        </label>
        <label>
          <input type="radio" name="mode" checked={mode === 'blank'} onChange={() => setMode('blank')} /> Blank agent
        </label>
      </fieldset>

      <form onSubmit={submit} noValidate aria-describedby="form-problems">
        {problems.length > 0 && (
          <div id="form-problems" className="message error" role="alert" tabIndex={-1}>
            <strong>Please fix {problems.length === 1 ? 'this' : 'these'} first:</strong>
            <ul>
              {problems.map((p) => (
                <li key={p.field + p.message}>{p.message}</li>
              ))}
            </ul>
          </div>
        )}

        <section className="panel" aria-labelledby="about-h">
          <h2 id="about-h">About the agent</h2>
          <div className="grid-2">
            <Field
              label="Name"
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
              label="Description"
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
              label="Welcome message"
              value={form.welcome}
              onChange={(v) =>
                update((d) => {
                  d.welcome = v;
                })
              }
              hint="Said when a conversation starts. Leave empty for none."
            />
          )}
        </section>

        {mode === 'guided' && (
          <>
            <section className="panel" aria-labelledby="intents-h">
              <h2 id="intents-h">1. What people say (dictionary)</h2>
              <p className="muted">Each intent is recognised from its words or phrases (comma-separated).</p>
              {form.intents.map((row, i) => (
                <fieldset className="row-edit" key={rowKeys.intents.keys[i]}>
                  <legend className="visually-hidden">Intent {i + 1}</legend>
                  <Field
                    label={`Intent ${i + 1} name`}
                    value={row.intent}
                    onChange={(v) =>
                      update((d) => {
                        d.intents[i]!.intent = v;
                      })
                    }
                    placeholder="greeting"
                    error={errorOf(`intents.${i}.intent`)}
                  />
                  <Field
                    label={`Intent ${i + 1} words`}
                    value={row.words}
                    onChange={(v) =>
                      update((d) => {
                        d.intents[i]!.words = v;
                      })
                    }
                    placeholder="hello, hi, good morning"
                    error={errorOf(`intents.${i}.words`)}
                  />
                  <button
                    type="button"
                    className="icon"
                    aria-label={`Remove intent ${i + 1}`}
                    onClick={() => removeRow('intents', i)}
                  >
                    Remove
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('intents', { intent: '', words: '' })}>
                Add intent
              </button>
              <div className="field narrow">
                <Select
                  label="Tolerate typos"
                  value={String(form.typoDistance)}
                  onChange={(v) =>
                    update((d) => {
                      d.typoDistance = Number(v);
                    })
                  }
                  options={[
                    { value: '0', label: 'No' },
                    { value: '1', label: 'One letter off' },
                    { value: '2', label: 'Two letters off' },
                  ]}
                />
              </div>
            </section>

            <section className="panel" aria-labelledby="rules-h">
              <h2 id="rules-h">2. What the agent does (behavior rules)</h2>
              <p className="muted">When an intent is recognised, the rule produces an action.</p>
              <datalist id="intent-names">
                {intents.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
              {form.rules.map((row, i) => (
                <fieldset className="row-edit" key={rowKeys.rules.keys[i]}>
                  <legend className="visually-hidden">Rule {i + 1}</legend>
                  <RowInput
                    label={`Rule ${i + 1}: when intent`}
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
                    label={`Rule ${i + 1}: then action`}
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
                    aria-label={`Remove rule ${i + 1}`}
                    onClick={() => removeRow('rules', i)}
                  >
                    Remove
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('rules', { intent: '', action: '' })}>
                Add rule
              </button>
            </section>

            <section className="panel" aria-labelledby="replies-h">
              <h2 id="replies-h">3. What the agent answers (output)</h2>
              <p className="muted">
                The reply for each action, with optional quick replies (comma-separated) offered as buttons.
              </p>
              <datalist id="action-names">
                {actions.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
              {form.replies.map((row, i) => (
                <fieldset className="row-edit three" key={rowKeys.replies.keys[i]}>
                  <legend className="visually-hidden">Reply {i + 1}</legend>
                  <RowInput
                    label={`Reply ${i + 1}: for action`}
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
                    label={`Reply ${i + 1}: text`}
                    value={row.text}
                    onChange={(v) =>
                      update((d) => {
                        d.replies[i]!.text = v;
                      })
                    }
                    error={errorOf(`replies.${i}.text`)}
                  />
                  <RowInput
                    label={`Reply ${i + 1}: quick replies`}
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
                    aria-label={`Remove reply ${i + 1}`}
                    onClick={() => removeRow('replies', i)}
                  >
                    Remove
                  </button>
                </fieldset>
              ))}
              <button type="button" onClick={() => addRow('replies', { action: '', text: '', quickReplies: '' })}>
                Add reply
              </button>
            </section>
            <p className="muted">The workflow runs: parser → behavior rules → output → templating.</p>
          </>
        )}
        {mode === 'blank' && (
          <p className="muted">
            A blank agent gets one empty workflow; add extensions to it under Resources → Workflows.
          </p>
        )}

        <ErrorMessage error={error} title="The agent could not be created." />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create agent'}
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
              Clear the form
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
