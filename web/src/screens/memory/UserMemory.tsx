/**
 * Persistent user memory per user: the users with remembered facts (admins), one user's entries with their
 * visibility and source agent, deleting one or all, the export of the memories, and for admins the export and
 * erasure of everything kept about the user (GDPR: memories, long-term properties, conversations).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth, usePermissions } from '../../auth.tsx';
import {
  ConfirmButton,
  Empty,
  ErrorMessage,
  Field,
  formatTime,
  Loading,
  Named,
  Notice,
  PageHeader,
  saveBlob,
  TableBox,
} from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { BASE, Link, navigate } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';

interface MemoryEntry {
  readonly id: string;
  readonly userId: string;
  readonly key: string;
  readonly value: unknown;
  readonly category: string;
  readonly visibility: string;
  readonly sourceAgentId?: string;
  readonly groupIds: readonly string[];
  readonly sourceConversationId?: string;
  readonly accessCount: number;
  readonly updatedAt: number;
}

interface MemoryUser {
  readonly userId: string;
  readonly entries: number;
  readonly lastUpdatedAt: number;
}

const enc = encodeURIComponent;
const memoriesPath = (userId: string) => `/usermemorystore/memories/${enc(userId)}`;
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** `/manager/memory`: pick a user. */
export function UserMemoryUsers() {
  const { api, user } = useAuth();
  const { isAdmin } = usePermissions();
  const [userId, setUserId] = useState(user?.name ?? '');
  const users = useQuery({
    queryKey: ['memory-users'],
    queryFn: () => api.client.get<MemoryUser[]>('/usermemorystore/memories', { query: { limit: 500 } }),
    enabled: isAdmin,
  });
  return (
    <>
      <PageHeader title={t('nav.userMemory')} description={t('userMemory.description')} />
      <form
        className="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          if (userId.trim()) navigate(`${BASE}/memory/${enc(userId.trim())}`);
        }}
      >
        <Field label={t('userMemory.userId')} value={userId} onChange={setUserId} />
        <button type="submit" className="primary">
          {t('userMemory.open')}
        </button>
      </form>
      {isAdmin && (
        <>
          <ErrorMessage error={users.error} />
          {users.isPending ? (
            <Loading />
          ) : users.data?.length === 0 ? (
            <Empty>
              {t('userMemory.usersEmpty')} <Link to={`${BASE}/agents`}>{t('userMemory.usersEmptyAction')}</Link>
            </Empty>
          ) : (
            <TableBox label={t('userMemory.users')}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('userMemory.user')}</th>
                    <th scope="col">{t('userMemory.entries')}</th>
                    <th scope="col" className="hide-narrow">
                      {t('userMemory.lastWritten')}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {users.data?.map((u) => (
                    <tr key={u.userId}>
                      <td>
                        <Link to={`${BASE}/memory/${enc(u.userId)}`}>{u.userId}</Link>
                      </td>
                      <td>{u.entries}</td>
                      <td className="hide-narrow">{formatTime(u.lastUpdatedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )}
        </>
      )}
    </>
  );
}

/** `/manager/memory/:userId`: one user's entries. */
export function UserMemory({ userId }: { userId: string }) {
  const { api } = useAuth();
  const { isAdmin } = usePermissions();
  const names = useAgentNames();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState('');
  const entries = useQuery({
    queryKey: ['memories', userId],
    queryFn: () => api.client.get<MemoryEntry[]>(memoriesPath(userId)),
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['memories', userId] }),
      queryClient.invalidateQueries({ queryKey: ['memory-users'] }),
    ]);
  const act = useMutation({
    mutationFn: async (what: () => Promise<string>) => what(),
    onSuccess: async (done) => {
      setMessage(done);
      await refresh();
    },
  });
  const download = async (path: string, name: string) => {
    saveBlob(await api.download(path), name);
    return t('userMemory.downloaded', { name });
  };

  return (
    <>
      <PageHeader
        title={t('userMemory.memoryOf', { userId })}
        description={<Link to={`${BASE}/memory`}>{t('userMemory.allUsers')}</Link>}
      >
        <button
          type="button"
          disabled={act.isPending}
          onClick={() => act.mutate(() => download(`${memoriesPath(userId)}/export`, `memories-${userId}.json`))}
        >
          {t('userMemory.exportMemories')}
        </button>
        <ConfirmButton
          question={t('userMemory.deleteAllQuestion', { userId })}
          disabled={act.isPending}
          onConfirm={() =>
            act.mutate(async () => {
              const { data } = await api.client.request<{ deleted: number }>('DELETE', memoriesPath(userId));
              return t('userMemory.deletedEntries', { count: data.deleted });
            })
          }
        >
          {t('userMemory.deleteAll')}
        </ConfirmButton>
      </PageHeader>
      {message && <Notice kind="success">{message}</Notice>}
      <ErrorMessage error={act.error ?? entries.error} />
      {entries.isPending ? (
        <Loading />
      ) : entries.data?.length === 0 ? (
        <Empty>
          {t('userMemory.entriesEmpty', { userId })}{' '}
          <Link to={`${BASE}/memory`}>{t('userMemory.entriesEmptyAction')}</Link>
        </Empty>
      ) : (
        <TableBox label={t('userMemory.entriesTable')}>
          <table data-testid="memory-entries">
            <thead>
              <tr>
                <th scope="col">{t('userMemory.key')}</th>
                <th scope="col">{t('userMemory.value')}</th>
                <th scope="col">{t('userMemory.category')}</th>
                <th scope="col">{t('userMemory.visibility')}</th>
                <th scope="col" className="hide-narrow">
                  {t('userMemory.writtenBy')}
                </th>
                <th scope="col" className="hide-narrow">
                  {t('userMemory.lastWritten')}
                </th>
                <th scope="col">
                  <span className="visually-hidden">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.data?.map((entry) => (
                <tr key={entry.id}>
                  <td>{entry.key}</td>
                  <td>{shown(entry.value)}</td>
                  <td>{entry.category}</td>
                  <td>
                    {entry.visibility}
                    {entry.groupIds.length > 0 && <div className="muted small">{entry.groupIds.join(', ')}</div>}
                  </td>
                  <td className="hide-narrow">
                    {entry.sourceAgentId ? (
                      <Named
                        name={names.get(entry.sourceAgentId)}
                        id={entry.sourceAgentId}
                        unnamed={t('agent.unnamed')}
                        what={t('id.agent')}
                        to={`${BASE}/agents/${entry.sourceAgentId}`}
                      />
                    ) : (
                      '—'
                    )}
                  </td>
                  <td className="hide-narrow">{formatTime(entry.updatedAt)}</td>
                  <td>
                    <ConfirmButton
                      question={t('userMemory.deleteQuestion', { key: entry.key })}
                      disabled={act.isPending}
                      onConfirm={() =>
                        act.mutate(async () => {
                          await api.client.request('DELETE', `${memoriesPath(userId)}/entries/${enc(entry.id)}`);
                          return t('userMemory.deleted', { key: entry.key });
                        })
                      }
                    >
                      {t('userMemory.delete', { key: entry.key })}
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {isAdmin && (
        <section className="panel" aria-labelledby="user-data-h">
          <h2 id="user-data-h">{t('userMemory.allDataOf', { userId })}</h2>
          <p className="muted">{t('userMemory.allDataDescription')}</p>
          <div className="form-actions">
            <button
              type="button"
              disabled={act.isPending}
              onClick={() => act.mutate(() => download(`/admin/gdpr/${enc(userId)}`, `user-data-${userId}.json`))}
            >
              {t('userMemory.exportAllData')}
            </button>
            <ConfirmButton
              question={t('userMemory.eraseQuestion', { userId })}
              disabled={act.isPending}
              onConfirm={() =>
                act.mutate(async () => {
                  const { data } = await api.client.request<{
                    memories: number;
                    longTermProperties: number;
                    conversations: number;
                  }>('DELETE', `/admin/gdpr/${enc(userId)}`);
                  return t('userMemory.erased', {
                    memories: data.memories,
                    longTermProperties: data.longTermProperties,
                    conversations: data.conversations,
                  });
                })
              }
            >
              {t('userMemory.eraseAllData')}
            </ConfirmButton>
          </div>
        </section>
      )}
    </>
  );
}
