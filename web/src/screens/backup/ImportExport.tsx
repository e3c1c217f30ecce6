/** Export an agent version as a ZIP; import a ZIP after previewing what it would create, update or skip. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Badge, ErrorMessage, Notice, PageHeader, Select, saveBlob, shortId, TableBox } from '../../components/ui.tsx';
import { parseResourceUri } from '../../lib/uri.ts';
import { BASE, Link } from '../../router.tsx';
import { useAgentDescriptors } from '../agents/useAgentNames.ts';
import { ignoredEntries, previewRows } from './preview.ts';

const strategies = [
  { value: 'create', label: t('importExport.createANewAgent') },
  { value: 'merge', label: t('importExport.mergeUpdateResourcesWith') },
  { value: 'upgrade', label: t('importExport.upgradeMatchExistingResources') },
];

export function ImportExport() {
  return (
    <>
      <PageHeader title={t('importExport.importExport')} description={t('importExport.moveAgentsBetweenServices')} />
      <div className="columns">
        <ExportPanel />
        <ImportPanel />
      </div>
    </>
  );
}

function ExportPanel() {
  const { api } = useAuth();
  const agents = useAgentDescriptors();
  const [choice, setChoice] = useState('');
  const options = (agents.data ?? []).flatMap((d) => {
    const ref = parseResourceUri(d.resource);
    return ref ? [{ value: `${ref.id}|${ref.version}`, label: `${d.name || shortId(ref.id)} v${ref.version}` }] : [];
  });
  const selected = choice || options[0]?.value || '';
  const run = useMutation({
    mutationFn: async () => {
      const [id, version] = selected.split('|') as [string, string];
      const location = await api.exportAgent(id, Number(version));
      const path = location.startsWith('http') ? new URL(location).pathname : location;
      const blob = await api.download(path);
      const name = path.split('/').pop() || `${id}-${version}.zip`;
      saveBlob(blob, name);
      return name;
    },
  });
  return (
    <section className="panel" aria-labelledby="export-h">
      <h2 id="export-h">{t('importExport.export')}</h2>
      {options.length === 0 ? (
        <p className="muted">{t('importExport.noAgentsToExport')}</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            run.mutate();
          }}
        >
          <Select label={t('importExport.agent')} value={selected} onChange={setChoice} options={options} />
          <button type="submit" className="primary" disabled={run.isPending}>
            {run.isPending ? t('importExport.exporting') : t('importExport.exportAndDownload')}
          </button>
        </form>
      )}
      {run.data && <Notice kind="success">{t('importExport.downloaded', { file: run.data })}</Notice>}
      <ErrorMessage error={run.error} title={t('importExport.exportFailed')} />
    </section>
  );
}

function ImportPanel() {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const fileId = useId();
  const [file, setFile] = useState<File>();
  const [strategy, setStrategy] = useState('create');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const preview = useMutation({
    mutationFn: ({ zip, strategy }: { zip: File; strategy: string }) => api.importPreview(zip, strategy),
    onSuccess: (data) =>
      setSelected(
        new Set(
          previewRows(data)
            .filter((r) => r.action === 'UPDATE')
            .map((r) => r.originId)
            .filter((x): x is string => !!x),
        ),
      ),
  });
  const run = useMutation({
    mutationFn: () => api.importZip(file!, strategy, strategy === 'create' ? undefined : [...selected]),
    onSuccess: () => queryClient.invalidateQueries(),
  });
  const rows = preview.data !== undefined ? previewRows(preview.data) : [];
  const ignored = preview.data !== undefined ? ignoredEntries(preview.data) : [];
  const importedId = run.data?.agentId ?? parseResourceUri(run.data?.location)?.id;
  const selectable = strategy !== 'create';

  const choose = (next: string) => {
    setStrategy(next);
    run.reset();
    if (file) preview.mutate({ zip: file, strategy: next });
  };

  return (
    <section className="panel" aria-labelledby="import-h">
      <h2 id="import-h">{t('importExport.import')}</h2>
      <div className="field">
        <label htmlFor={fileId}>{t('importExport.zipFile')}</label>
        <input
          id={fileId}
          type="file"
          accept=".zip,application/zip"
          onChange={(e) => {
            setFile(e.target.files?.[0]);
            preview.reset();
            run.reset();
          }}
        />
      </div>
      <fieldset className="radio-list">
        <legend>{t('importExport.strategy')}</legend>
        {strategies.map((s) => (
          <label key={s.value}>
            <input
              type="radio"
              name="strategy"
              value={s.value}
              checked={strategy === s.value}
              onChange={() => choose(s.value)}
            />{' '}
            {s.label}
          </label>
        ))}
      </fieldset>
      <button
        type="button"
        onClick={() => file && preview.mutate({ zip: file, strategy })}
        disabled={!file || preview.isPending}
      >
        {preview.isPending ? t('importExport.checking') : t('importExport.preview')}
      </button>
      <ErrorMessage error={preview.error} title={t('importExport.previewFailed')} />
      {preview.data !== undefined && (
        <>
          <h3>{t('importExport.whatTheImportWould')}</h3>
          {rows.length === 0 ? (
            <pre className="raw">{JSON.stringify(preview.data, null, 2)}</pre>
          ) : (
            <TableBox label={t('table.importPreview')}>
              <table>
                <thead>
                  <tr>
                    {selectable && <th scope="col">{t('importExport.update')}</th>}
                    <th scope="col">{t('importExport.resource')}</th>
                    <th scope="col">{t('importExport.action')}</th>
                    <th scope="col" className="hide-narrow">
                      {t('importExport.originId')}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r, i) => (
                    <tr key={r.originId ?? i}>
                      {selectable && (
                        <td>
                          {r.action === 'UPDATE' && r.originId && (
                            <input
                              type="checkbox"
                              aria-label={t('importExport.update2', { label: r.label })}
                              checked={selected.has(r.originId)}
                              onChange={(e) => {
                                const next = new Set(selected);
                                if (e.target.checked) next.add(r.originId!);
                                else next.delete(r.originId!);
                                setSelected(next);
                              }}
                            />
                          )}
                        </td>
                      )}
                      <td>
                        {r.label}
                        {r.target && <div className="muted small">{t('importExport.into', { target: r.target })}</div>}
                      </td>
                      <td>
                        <Badge status={r.action} />
                      </td>
                      <td className="hide-narrow">
                        <code>{r.originId}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )}
          {ignored.length > 0 && (
            <p className="muted small">{t('importExport.ignoredEntries', { entries: ignored.join(', ') })}</p>
          )}
          <div className="form-actions">
            <button type="button" className="primary" onClick={() => run.mutate()} disabled={run.isPending}>
              {run.isPending ? t('importExport.importing') : t('importExport.import2', { strategy })}
            </button>
          </div>
        </>
      )}
      <ErrorMessage error={run.error} title={t('importExport.importFailed')} />
      {run.data && (
        <Notice kind="success">
          {t('importExport.imported')}{' '}
          {importedId ? (
            <Link to={`${BASE}/agents/${importedId}`}>
              {t('importExport.openTheImportedAgent')}
              {run.data.agentVersion ? ` (v${run.data.agentVersion})` : ''}
            </Link>
          ) : (
            run.data.location
          )}
        </Notice>
      )}
    </section>
  );
}
