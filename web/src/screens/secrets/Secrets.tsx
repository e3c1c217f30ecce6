/** The secrets vault: write-only values, a list of metadata; the 503 "vault disabled" state spelled out. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Tx } from '../../i18n/Tx.tsx';
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
      setNameError(t('secrets.useLettersDigitsAnd'));
      return;
    }
    setNameError(undefined);
    save.mutate();
  };

  return (
    <>
      <PageHeader
        title={t('secrets.secrets')}
        description={
          <>
            {t('secrets.valuesAreWriteOnly')} <code>{'${vault:NAME}'}</code>.
          </>
        }
      />
      {disabled ? (
        <div className="message warning" role="alert">
          <strong>{t('secrets.theVaultIsDisabled')}</strong>{' '}
          <Tx
            k="secrets.vaultDisabled"
            values={{ setting: <code>svc.vault.master-key</code>, variable: <code>SVC_VAULT_MASTER_KEY</code> }}
          />
        </div>
      ) : missing ? (
        <div className="message warning" role="alert">
          {t('secrets.thisServiceHasNo')}
        </div>
      ) : (
        <>
          <form id="secret-form" className="panel" onSubmit={submit} aria-labelledby="secret-h">
            <h2 id="secret-h">{t('secrets.storeASecret')}</h2>
            <div className="grid-3">
              <Field
                label={t('secrets.name')}
                value={name}
                onChange={setName}
                required
                error={nameError}
                autoComplete="off"
              />
              <Field
                label={t('secrets.value')}
                value={value}
                onChange={setValue}
                type="password"
                required
                autoComplete="new-password"
                hint={t('secrets.savingAnExistingName')}
              />
              <Field label={t('secrets.description')} value={description} onChange={setDescription} />
            </div>
            <button type="submit" className="primary" disabled={save.isPending || name.trim() === '' || value === ''}>
              {t('secrets.saveSecret')}
            </button>
            {saved && <Notice kind="success">{t('secrets.secretSaved', { saved })}</Notice>}
            <ErrorMessage error={save.error} />
          </form>
          <section className="panel" aria-labelledby="secrets-h">
            <h2 id="secrets-h">{t('secrets.storedSecrets')}</h2>
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
                      <th scope="col">{t('secrets.name')}</th>
                      <th scope="col">{t('secrets.reference')}</th>
                      <th scope="col" className="hide-narrow">
                        {t('secrets.description')}
                      </th>
                      <th scope="col" className="hide-narrow">
                        {t('secrets.changed')}
                      </th>
                      <th scope="col">
                        <span className="visually-hidden">{t('secrets.actions')}</span>
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
                            <ConfirmButton
                              question={t('secrets.delete2', { name })}
                              onConfirm={() => remove.mutate(name)}
                            >
                              {t('secrets.delete')}
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
