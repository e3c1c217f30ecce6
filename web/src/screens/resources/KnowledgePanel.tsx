/**
 * The documents of a knowledge base, below its configuration: upload files (each on its own request, so one
 * refused file loses nothing else) with their progress through upload and ingestion, the ingestion status of
 * each, the documents with delete, and a search box showing the chunks retrieval would find with their scores.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../auth.tsx';
import type { Ingestion, SearchHit } from '../../api/types.ts';
import { plural, t } from '../../i18n/index.ts';
import {
  Badge,
  ConfirmButton,
  Empty,
  ErrorMessage,
  Field,
  formatTime,
  describeError,
  TableBox,
  FocusFormButton,
} from '../../components/ui.tsx';

interface Upload {
  readonly name: string;
  readonly stage: 'waiting' | 'uploading' | 'ingesting' | 'completed' | 'failed';
  readonly detail?: string;
}

const POLL_MILLIS = 300;
const finished = (status: Ingestion['status']) => status !== 'pending' && status !== 'processing';
const chunks = (count: number) => plural(count, 'knowledgePanel.chunkCountOne', 'knowledgePanel.chunkCount');

export function KnowledgePanel({ id, canWrite }: { id: string; canWrite: boolean }) {
  const { api } = useAuth();
  const queryClient = useQueryClient();
  const documents = useQuery({ queryKey: ['knowledge-documents', id], queryFn: () => api.knowledgeDocuments(id) });
  const [files, setFiles] = useState<File[]>([]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<SearchHit[]>();
  const [error, setError] = useState<unknown>();

  const setStage = (index: number, upload: Upload) =>
    setUploads((current) => current.map((old, i) => (i === index ? upload : old)));

  const ingest = async (file: File, index: number) => {
    setStage(index, { name: file.name, stage: 'uploading' });
    try {
      let ingestion = await api.ingestFile(id, file);
      setStage(index, { name: file.name, stage: 'ingesting' });
      while (!finished(ingestion.status)) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MILLIS));
        ingestion = await api.ingestion(id, ingestion.ingestionId);
      }
      const document = ingestion.documents[0];
      setStage(
        index,
        ingestion.status === 'completed'
          ? { name: file.name, stage: 'completed', detail: chunks(document?.chunks ?? 0) }
          : { name: file.name, stage: 'failed', detail: document?.error ?? ingestion.status },
      );
    } catch (e) {
      setStage(index, { name: file.name, stage: 'failed', detail: describeError(e) });
    }
  };

  const upload = async (event: React.FormEvent) => {
    event.preventDefault();
    setUploads(files.map((file) => ({ name: file.name, stage: 'waiting' })));
    for (const [index, file] of files.entries()) await ingest(file, index);
    await queryClient.invalidateQueries({ queryKey: ['knowledge-documents', id] });
  };

  const search = async (event: React.FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      setResults(await api.searchKnowledge(id, query));
    } catch (e) {
      setError(e);
    }
  };

  const remove = async (documentId: string) => {
    setError(undefined);
    try {
      await api.deleteKnowledgeDocument(id, documentId);
      await queryClient.invalidateQueries({ queryKey: ['knowledge-documents', id] });
    } catch (e) {
      setError(e);
    }
  };

  const done = uploads.filter((u) => u.stage === 'completed' || u.stage === 'failed').length;
  return (
    <section className="panel" aria-labelledby="knowledge-h">
      <h2 id="knowledge-h">{t('knowledgePanel.documents')}</h2>
      {canWrite && (
        <form id="upload-form" onSubmit={upload} aria-label={t('knowledgePanel.uploadDocuments')}>
          <div className="field">
            <label htmlFor="knowledge-files">{t('knowledgePanel.textMarkdownHtmlOr')}</label>
            <input
              id="knowledge-files"
              type="file"
              multiple
              accept=".txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf"
              onChange={(e) => setFiles([...(e.target.files ?? [])])}
            />
          </div>
          <button type="submit" className="primary" disabled={files.length === 0}>
            {t('knowledgePanel.uploadAndIngest')}
          </button>
        </form>
      )}
      {uploads.length > 0 && (
        <section aria-label={t('knowledgePanel.uploadProgress')}>
          <progress max={uploads.length} value={done} aria-label={t('knowledgePanel.filesIngested')} />{' '}
          <span>{t('knowledgePanel.ofFiles', { done, length: uploads.length })}</span>
          <ul className="plain-list">
            {uploads.map((u) => (
              <li key={u.name}>
                <strong>{u.name}</strong>:{' '}
                <Badge
                  status={u.stage === 'completed' ? 'READY' : u.stage === 'failed' ? 'ERROR' : 'IN_PROGRESS'}
                  label={u.stage}
                />{' '}
                {u.detail && <span className="muted">{u.detail}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      <ErrorMessage error={documents.error ?? error} />
      {documents.data && documents.data.length === 0 && (
        <Empty>
          {t('knowledgePanel.noDocumentsYet')}{' '}
          <FocusFormButton formId="upload-form">{t('knowledgePanel.uploadFirst')}</FocusFormButton>
        </Empty>
      )}
      {documents.data && documents.data.length > 0 && (
        <TableBox label={t('table.documents')}>
          <table>
            <thead>
              <tr>
                <th>{t('knowledgePanel.document')}</th>
                <th>{t('knowledgePanel.type')}</th>
                <th>{t('knowledgePanel.chunks')}</th>
                <th>{t('knowledgePanel.size')}</th>
                <th>{t('knowledgePanel.ingested')}</th>
                {canWrite && <th aria-label={t('knowledgePanel.actions')} />}
              </tr>
            </thead>
            <tbody>
              {documents.data.map((d) => (
                <tr key={d.id}>
                  <td>{d.name}</td>
                  <td>{d.contentType}</td>
                  <td>{d.chunkCount}</td>
                  <td>{t('knowledgePanel.bytes', { sizeBytes: d.sizeBytes })}</td>
                  <td>{formatTime(d.updatedOn)}</td>
                  {canWrite && (
                    <td>
                      <ConfirmButton
                        question={t('knowledgePanel.deleteAndItsChunks', { name: d.name })}
                        onConfirm={() => remove(d.id)}
                      >
                        {t('knowledgePanel.delete')}
                      </ConfirmButton>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <form onSubmit={search} aria-label={t('knowledgePanel.searchTheKnowledgeBase')}>
        <Field
          label={t('knowledgePanel.search')}
          value={query}
          onChange={setQuery}
          placeholder={t('knowledgePanel.aQuestionTheAgent')}
        />
        <button type="submit" disabled={query.trim() === ''}>
          {t('knowledgePanel.search')}
        </button>
      </form>
      {results && results.length === 0 && <Empty>{t('knowledgePanel.nothingReachesTheMinimum')}</Empty>}
      {results && results.length > 0 && (
        <ol aria-label={t('knowledgePanel.searchResults')}>
          {results.map((hit) => (
            <li key={`${hit.documentName}-${hit.chunkIndex}`}>
              <strong>{hit.documentName}</strong>
              {t('knowledgePanel.chunkScore', { chunk: hit.chunkIndex + 1, score: hit.score.toFixed(3) })}
              <p>{hit.text}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
