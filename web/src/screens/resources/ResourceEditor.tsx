/**
 * Create or edit one resource: name and description (its descriptor) and the JSON document in a CodeMirror
 * editor that shows parse errors and the service's 400 problems at their line. Versions, duplicate, delete.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useResourceKinds, type ResourceKind } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { JsonEditor } from '../../components/JsonEditor.tsx';
import { ConfirmButton, ErrorMessage, Field, Loading, Notice, PageHeader } from '../../components/ui.tsx';
import { jsonSyntaxIssue, problemIssue, type JsonIssue } from '../../lib/json-locate.ts';
import { parseResourceUri } from '../../lib/uri.ts';
import { t } from '../../i18n/index.ts';
import { BASE, Link, navigate, useLocation } from '../../router.tsx';
import { KnowledgePanel } from './KnowledgePanel.tsx';
import { AgentMemoryForm } from './AgentMemoryForm.tsx';
import { LlmForm } from './LlmForm.tsx';
import { VersionDiff } from './VersionDiff.tsx';

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function ResourceEditor({ kindSlug, id }: { kindSlug: string; id?: string }) {
  const kinds = useResourceKinds();
  const kind = kinds?.bySlug(kindSlug);
  const { canWrite } = usePermissions();
  if (!kinds) return <Loading />;
  if (!kind) return <PageHeader title={t('resourceEditor.unknownResourceType')} />;
  if (id) return <EditExisting kind={kind} id={id} canWrite={canWrite} />;
  return canWrite ? (
    <CreateNew kind={kind} />
  ) : (
    <>
      <PageHeader title={t('resourceEditor.new', { title: kind.title })} />
      <ReadOnlyNote />
    </>
  );
}

/** For roles that may not write (svc-viewer): what they see instead of the controls. */
export function ReadOnlyNote() {
  return <p className="read-only-note">{t('resourceEditor.readOnlyCreatingEditing')}</p>;
}

/** The document editor with local and server issues, shared by create and edit. */
function useDocument(initial: string) {
  const [text, setText] = useState(initial);
  const [serverIssue, setServerIssue] = useState<JsonIssue>();
  const syntax = useMemo(() => jsonSyntaxIssue(text), [text]);
  const issues = useMemo(
    () => [syntax, serverIssue].filter((x): x is JsonIssue => x !== undefined),
    [syntax, serverIssue],
  );
  const change = (value: string) => {
    setText(value);
    setServerIssue(undefined);
  };
  /** Maps a save failure onto the document; answers whether it was a document problem. */
  const refused = (error: unknown): boolean => {
    if (error instanceof ApiError && error.status === 400) {
      setServerIssue(problemIssue(text, error.problem));
      return true;
    }
    return false;
  };
  return { text, setText, change, issues, syntax, refused };
}

function CreateNew({ kind }: { kind: ResourceKind }) {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const doc = useDocument(pretty(kind.template));
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string>();
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    // Everything is shown by its name: a new resource gets one from the start.
    if (name.trim() === '') {
      setNameError(t('resources.nameRequired', { kind: kind.title }));
      return;
    }
    setNameError(undefined);
    if (doc.syntax) return;
    setBusy(true);
    setError(undefined);
    try {
      const uri = await api.create(kind.storePath, JSON.parse(doc.text));
      const ref = parseResourceUri(uri);
      if (ref) await api.describe(ref.id, ref.version, { name: name.trim(), description });
      await queryClient.invalidateQueries({ queryKey: ['descriptors'] });
      navigate(`${BASE}/resources/${kind.slug}/${ref?.id ?? ''}`, { replace: true });
    } catch (e) {
      if (!doc.refused(e)) setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeader
        title={t('resourceEditor.new', { title: kind.title })}
        description={t('resourceEditor.startFromTheExample')}
      />
      <form onSubmit={save} noValidate>
        <div className="grid-2">
          <Field label={t('list.name')} value={name} onChange={setName} required error={nameError} />
          <Field label={t('resources.description')} value={description} onChange={setDescription} />
        </div>
        <DocumentForms kindName={kind.name} text={doc.text} onChange={doc.change} readOnly={false} />
        <JsonEditor
          label={t('resourceEditor.json', { title: kind.title })}
          value={doc.text}
          onChange={doc.change}
          issues={doc.issues}
        />
        <ErrorMessage error={error} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy || doc.syntax !== undefined}>
            {busy ? t('resourceEditor.creating') : t('resourceEditor.create', { title: kind.title })}
          </button>
          <Link to={kind.slug === 'agents' ? `${BASE}/agents` : `${BASE}/resources/${kind.slug}`} className="button">
            {t('resourceEditor.cancel')}
          </Link>
        </div>
      </form>
    </>
  );
}

function EditExisting({ kind, id, canWrite }: { kind: ResourceKind; id: string; canWrite: boolean }) {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const { search } = useLocation();
  const current = useQuery({
    queryKey: ['currentversion', kind.storePath, id],
    queryFn: () => api.currentVersion(kind.storePath, id),
  });
  const asked = Number(search.get('version'));
  const version = asked > 0 ? asked : current.data;
  const resource = useQuery({
    queryKey: ['resource', kind.storePath, id, version],
    queryFn: () => api.read(kind.storePath, id, version!),
    enabled: version !== undefined,
  });
  const descriptor = useQuery({ queryKey: ['descriptor', id], queryFn: () => api.descriptor(id) });
  const doc = useDocument('');
  const [loadedFor, setLoadedFor] = useState<number>();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (resource.data !== undefined && loadedFor !== version) {
      doc.setText(pretty(resource.data));
      setLoadedFor(version);
    }
  }, [resource.data, version, loadedFor, doc.setText]);
  useEffect(() => {
    if (descriptor.data) {
      setName(descriptor.data.name ?? '');
      setDescription(descriptor.data.description ?? '');
    }
  }, [descriptor.data]);

  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['currentversion', kind.storePath, id] }),
      queryClient.invalidateQueries({ queryKey: ['descriptor', id] }),
      queryClient.invalidateQueries({ queryKey: ['descriptors'] }),
    ]);

  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    setMessage('');
    try {
      await what();
    } catch (e) {
      if (!doc.refused(e)) setError(e);
    } finally {
      setBusy(false);
    }
  };

  const saveDocument = () =>
    run(async () => {
      const uri = await api.update(kind.storePath, id, current.data!, JSON.parse(doc.text));
      const next = parseResourceUri(uri)?.version ?? current.data! + 1;
      await refresh();
      setLoadedFor(next);
      navigate(`${BASE}/resources/${kind.slug}/${id}?version=${next}`, { replace: true });
      setMessage(t('resourceEditor.savedAsVersion', { next }));
    });

  const saveDescriptor = (event: React.FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await api.describe(id, current.data, { name, description });
      await refresh();
      setMessage(t('resourceEditor.nameAndDescriptionSaved'));
    });
  };

  const duplicate = () =>
    run(async () => {
      const uri = await api.duplicate(kind.storePath, id, version!);
      const ref = parseResourceUri(uri);
      if (ref) await api.describe(ref.id, ref.version, { name: `${name || kind.title} (copy)`, description });
      await refresh();
      navigate(`${BASE}/resources/${kind.slug}/${ref?.id ?? ''}`);
    });

  const remove = () =>
    run(async () => {
      await api.remove(kind.storePath, id, current.data!);
      await refresh();
      navigate(kind.slug === 'agents' ? `${BASE}/agents` : `${BASE}/resources/${kind.slug}`);
    });

  if (current.error)
    return (
      <>
        <PageHeader title={kind.title} />
        <ErrorMessage error={current.error} />
      </>
    );
  if (current.isPending || resource.isPending) return <Loading />;
  const old = version !== current.data;

  return (
    <>
      <PageHeader
        title={descriptor.data?.name || `(unnamed ${kind.title})`}
        description={
          <>
            {kind.title} <code>{id}</code>
            {t('resourceEditor.versionOf', { version, current: current.data })}
          </>
        }
      >
        {kind.slug === 'agents' && (
          <Link to={`${BASE}/agents/${id}`} className="button">
            {t('resourceEditor.agentOverview')}
          </Link>
        )}
        {canWrite && (
          <button type="button" onClick={duplicate} disabled={busy}>
            {t('resourceEditor.duplicate')}
          </button>
        )}
        {canWrite && (
          <ConfirmButton
            question={t('resourceEditor.deleteThis', { title: kind.title })}
            onConfirm={remove}
            disabled={busy}
          >
            {t('resourceEditor.delete')}
          </ConfirmButton>
        )}
      </PageHeader>
      {!canWrite && <ReadOnlyNote />}
      {message && <Notice kind="success">{message}</Notice>}
      <ErrorMessage error={error ?? resource.error} />

      {canWrite && (
        <form className="panel" onSubmit={saveDescriptor} aria-labelledby="common-h">
          <h2 id="common-h">{t('resourceEditor.nameAndDescription')}</h2>
          <div className="grid-2">
            <Field label={t('resourceEditor.name')} value={name} onChange={setName} />
            <Field label={t('resourceEditor.description')} value={description} onChange={setDescription} />
          </div>
          <button type="submit" disabled={busy}>
            {t('resourceEditor.saveNameAndDescription')}
          </button>
        </form>
      )}

      <section className="panel" aria-labelledby="doc-h">
        <h2 id="doc-h">{t('resourceEditor.document')}</h2>
        {old && canWrite && (
          <Notice kind="warning">
            {t('resourceEditor.youAreLookingAt', { version, value: (current.data ?? 0) + 1 })}{' '}
            <Link to={`${BASE}/resources/${kind.slug}/${id}`}>{t('resourceEditor.openTheCurrentVersion')}</Link>.
          </Notice>
        )}
        <DocumentForms kindName={kind.name} text={doc.text} onChange={doc.change} readOnly={!canWrite} />
        <JsonEditor
          label={t('resourceEditor.json', { title: kind.title })}
          value={doc.text}
          onChange={doc.change}
          issues={doc.issues}
          readOnly={!canWrite}
        />
        {canWrite && (
          <div className="form-actions">
            <button
              type="button"
              className="primary"
              onClick={saveDocument}
              disabled={busy || doc.syntax !== undefined}
            >
              {t('resourceEditor.saveAsNewVersion')}
            </button>
            <button
              type="button"
              onClick={() => {
                doc.change(pretty(resource.data));
              }}
              disabled={busy}
            >
              {t('resourceEditor.revertChanges')}
            </button>
          </div>
        )}
      </section>

      {kind.name === 'rag' && <KnowledgePanel id={id} canWrite={canWrite} />}

      {current.data !== undefined && <VersionDiff storePath={kind.storePath} id={id} current={current.data} />}
    </>
  );
}

/** Forms above the JSON for the kinds that have them (they edit the same document text). */
function DocumentForms(props: { kindName: string; text: string; onChange: (text: string) => void; readOnly: boolean }) {
  const { kindName, ...form } = props;
  if (kindName === 'llm') return <LlmForm {...form} />;
  if (kindName === 'agent') return <AgentMemoryForm {...form} />;
  return null;
}
