/** Conversations with filters: agent, state, user. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../auth.tsx';
import {
  Badge,
  Empty,
  ErrorMessage,
  Field,
  Loading,
  PageHeader,
  Select,
  formatTime,
  shortId,
} from '../../components/ui.tsx';
import { BASE, Link } from '../../router.tsx';
import { useDebounced } from '../../useDebounced.ts';
import { useAgentNames } from '../agents/useAgentNames.ts';

const states = ['', 'READY', 'IN_PROGRESS', 'ENDED', 'EXECUTION_INTERRUPTED', 'ERROR'];
const PAGE = 25;

export function ConversationList() {
  const { api } = useAuth();
  const names = useAgentNames();
  const [agentId, setAgentId] = useState('');
  const [state, setState] = useState('');
  const [user, setUser] = useState('');
  const [page, setPage] = useState(0);
  const userId = useDebounced(user.trim(), 300);
  const filters = {
    agentId: agentId || undefined,
    conversationState: state || undefined,
    userId: userId || undefined,
    index: page,
    limit: PAGE,
  };
  const list = useQuery({ queryKey: ['conversations', filters], queryFn: () => api.conversations(filters) });
  const agentOptions = [
    { value: '', label: 'All agents' },
    ...[...names.entries()].map(([id, name]) => ({ value: id, label: name || shortId(id) })),
  ];

  return (
    <>
      <PageHeader
        title="Conversations"
        description="Every conversation with every step is kept; open one to read it."
      />
      <form className="toolbar" onSubmit={(e) => e.preventDefault()} aria-label="Filter conversations">
        <Select
          label="Agent"
          value={agentId}
          onChange={(v) => {
            setAgentId(v);
            setPage(0);
          }}
          options={agentOptions}
        />
        <Select
          label="State"
          value={state}
          onChange={(v) => {
            setState(v);
            setPage(0);
          }}
          options={states.map((s) => ({ value: s, label: s === '' ? 'Any state' : s.replace(/_/g, ' ') }))}
        />
        <Field
          label="User id"
          value={user}
          onChange={(v) => {
            setUser(v);
            setPage(0);
          }}
          type="search"
        />
      </form>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty>No conversations match.</Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Conversation</th>
              <th scope="col">Agent</th>
              <th scope="col">State</th>
              <th scope="col" className="hide-narrow">
                User
              </th>
              <th scope="col" className="hide-narrow">
                Steps
              </th>
              <th scope="col" className="hide-narrow">
                Last activity
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.map((c) => (
              <tr key={c.conversationId}>
                <td>
                  <Link to={`${BASE}/conversations/${c.conversationId}`}>
                    <code>{shortId(c.conversationId)}</code>
                  </Link>
                </td>
                <td>
                  {names.get(c.agentId) || shortId(c.agentId)}{' '}
                  <span className="muted">
                    v{c.agentVersion} · {c.environment}
                  </span>
                </td>
                <td>
                  <Badge status={c.conversationState} />
                </td>
                <td className="hide-narrow">{c.userId}</td>
                <td className="hide-narrow">{c.conversationStepSize}</td>
                <td className="hide-narrow">{formatTime(c.lastModifiedOn)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        <button type="button" onClick={() => setPage(Math.max(0, page - 1))} disabled={page === 0}>
          Previous page
        </button>
        <span className="muted">Page {page + 1}</span>
        <button type="button" onClick={() => setPage(page + 1)} disabled={(list.data?.length ?? 0) < PAGE}>
          Next page
        </button>
      </div>
    </>
  );
}
