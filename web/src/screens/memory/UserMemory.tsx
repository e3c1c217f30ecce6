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
  Notice,
  PageHeader,
  saveBlob,
  shortId,
} from '../../components/ui.tsx';
import { BASE, Link, navigate } from '../../router.tsx';

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
      <PageHeader
        title="User memory"
        description="Facts agents remember about users across conversations (their memory tools), per user."
      />
      <form
        className="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          if (userId.trim()) navigate(`${BASE}/memory/${enc(userId.trim())}`);
        }}
      >
        <Field label="User id" value={userId} onChange={setUserId} />
        <button type="submit" className="primary">
          Open
        </button>
      </form>
      {isAdmin && (
        <>
          <ErrorMessage error={users.error} />
          {users.isPending ? (
            <Loading />
          ) : users.data?.length === 0 ? (
            <Empty>No user has remembered facts yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Entries</th>
                  <th scope="col" className="hide-narrow">
                    Last written
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
    return `Downloaded ${name}.`;
  };

  return (
    <>
      <PageHeader title={`Memory of ${userId}`} description={<Link to={`${BASE}/memory`}>All users</Link>}>
        <button
          type="button"
          disabled={act.isPending}
          onClick={() => act.mutate(() => download(`${memoriesPath(userId)}/export`, `memories-${userId}.json`))}
        >
          Export memories
        </button>
        <ConfirmButton
          question={`Delete every remembered fact about ${userId}?`}
          disabled={act.isPending}
          onConfirm={() =>
            act.mutate(async () => {
              const { data } = await api.client.request<{ deleted: number }>('DELETE', memoriesPath(userId));
              return `Deleted ${data.deleted} entries.`;
            })
          }
        >
          Delete all memories
        </ConfirmButton>
      </PageHeader>
      {message && <Notice kind="success">{message}</Notice>}
      <ErrorMessage error={act.error ?? entries.error} />
      {entries.isPending ? (
        <Loading />
      ) : entries.data?.length === 0 ? (
        <Empty>Nothing is remembered about {userId}.</Empty>
      ) : (
        <table data-testid="memory-entries">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">Category</th>
              <th scope="col">Visibility</th>
              <th scope="col" className="hide-narrow">
                Written by
              </th>
              <th scope="col" className="hide-narrow">
                Last written
              </th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
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
                    <Link to={`${BASE}/agents/${entry.sourceAgentId}`}>{shortId(entry.sourceAgentId)}</Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="hide-narrow">{formatTime(entry.updatedAt)}</td>
                <td>
                  <ConfirmButton
                    question={`Delete ${entry.key}?`}
                    disabled={act.isPending}
                    onConfirm={() =>
                      act.mutate(async () => {
                        await api.client.request('DELETE', `${memoriesPath(userId)}/entries/${enc(entry.id)}`);
                        return `Deleted ${entry.key}.`;
                      })
                    }
                  >
                    Delete {entry.key}
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {isAdmin && (
        <section className="panel" aria-labelledby="user-data-h">
          <h2 id="user-data-h">All data of {userId}</h2>
          <p className="muted">
            Memories, long-term properties and conversations (every step): one file to hand over, or one erasure.
          </p>
          <div className="form-actions">
            <button
              type="button"
              disabled={act.isPending}
              onClick={() => act.mutate(() => download(`/admin/gdpr/${enc(userId)}`, `user-data-${userId}.json`))}
            >
              Export all data
            </button>
            <ConfirmButton
              question={`Erase memories, long-term properties and conversations of ${userId}?`}
              disabled={act.isPending}
              onConfirm={() =>
                act.mutate(async () => {
                  const { data } = await api.client.request<{
                    memories: number;
                    longTermProperties: number;
                    conversations: number;
                  }>('DELETE', `/admin/gdpr/${enc(userId)}`);
                  return `Erased ${data.memories} memories, ${data.longTermProperties} long-term properties and ${data.conversations} conversations.`;
                })
              }
            >
              Erase all data
            </ConfirmButton>
          </div>
        </section>
      )}
    </>
  );
}
