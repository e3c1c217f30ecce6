/** The secrets vault: write-only values, a list of metadata; the 503 "vault disabled" state spelled out. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  ConfirmButton,
  Empty,
  FocusFormButton,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  PageHeader,
  formatTime,
  TableBox,
} from '../../components/ui.tsx';

const NAME = /^[A-Za-z0-9_.-]+$/;

export function Secrets() {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const secrets = useQuery({ queryKey: ['secrets'], queryFn: api.secrets, retry: false });
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [description, setDescription] = useState('');
  const [nameError, setNameError] = useState<string>();
  const [saved, setSaved] = useState('');
  const save = useMutation({
    mutationFn: () => api.putSecret(name.trim(), value, description.trim()),
    onSuccess: () => {
      setSaved(name.trim());
      setName('');
      setValue('');
      setDescription('');
      return queryClient.invalidateQueries({ queryKey: ['secrets'] });
    },
  });
  const remove = useMutation({
    mutationFn: (n: string) => api.deleteSecret(n),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['secrets'] }),
  });

  const disabled = secrets.error instanceof ApiError && secrets.error.status === 503;
  const missing = secrets.error instanceof ApiError && secrets.error.status === 404;

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    if (!NAME.test(name.trim())) {
      setNameError('Use letters, digits, _ . and -.');
      return;
    }
    setNameError(undefined);
    save.mutate();
  };

  return (
    <>
      <PageHeader
        title="Secrets"
        description={
          <>
            Values are write-only: once saved they are never shown again. Refer to a secret in HTTP calls and LLM
            parameters as <code>{'${vault:NAME}'}</code>.
          </>
        }
      />
      {disabled ? (
        <div className="message warning" role="alert">
          <strong>The vault is disabled.</strong> The service answers 503 because no master key is configured. Set{' '}
          <code>svc.vault.master-key</code> (environment <code>SVC_VAULT_MASTER_KEY</code>) and restart the service to
          store secrets.
        </div>
      ) : missing ? (
        <div className="message warning" role="alert">
          This service has no secrets endpoint yet (404).
        </div>
      ) : (
        <>
          <form id="secret-form" className="panel" onSubmit={submit} aria-labelledby="secret-h">
            <h2 id="secret-h">Store a secret</h2>
            <div className="grid-3">
              <Field label="Name" value={name} onChange={setName} required error={nameError} autoComplete="off" />
              <Field
                label="Value"
                value={value}
                onChange={setValue}
                type="password"
                required
                autoComplete="new-password"
                hint="Saving an existing name replaces its value."
              />
              <Field label="Description" value={description} onChange={setDescription} />
            </div>
            <button type="submit" className="primary" disabled={save.isPending || name.trim() === '' || value === ''}>
              Save secret
            </button>
            {saved && <Notice kind="success">Secret {saved} saved.</Notice>}
            <ErrorMessage error={save.error} />
          </form>
          <section className="panel" aria-labelledby="secrets-h">
            <h2 id="secrets-h">Stored secrets</h2>
            <ErrorMessage error={secrets.error ?? remove.error} />
            {secrets.isPending ? (
              <Loading />
            ) : secrets.data?.length === 0 ? (
              <Empty>
                {t('secrets.empty')} <FocusFormButton formId="secret-form">{t('secrets.emptyAction')}</FocusFormButton>
              </Empty>
            ) : (
              <TableBox label={t('nav.secrets')}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Reference</th>
                      <th scope="col" className="hide-narrow">
                        Description
                      </th>
                      <th scope="col" className="hide-narrow">
                        Changed
                      </th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {secrets.data?.map((s) => {
                      const name = String(s.name ?? s.keyName ?? s.id ?? '');
                      const changed = (s.lastModifiedAt ?? s.lastModifiedOn ?? s.createdAt) as
                        | number
                        | string
                        | undefined;
                      const reference = typeof s.reference === 'string' ? s.reference : `\${vault:${name}}`;
                      return (
                        <tr key={name}>
                          <td>
                            <code>{name}</code>
                          </td>
                          <td>
                            <code>{reference}</code>
                          </td>
                          <td className="hide-narrow">{s.description}</td>
                          <td className="hide-narrow">{formatTime(changed)}</td>
                          <td>
                            <ConfirmButton question={`Delete ${name}?`} onConfirm={() => remove.mutate(name)}>
                              Delete
                            </ConfirmButton>
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </TableBox>
            )}
          </section>
        </>
      )}
    </>
  );
}
