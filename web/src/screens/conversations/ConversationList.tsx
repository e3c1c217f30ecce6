/** Conversations with filters: agent, state, user. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  Badge,
  Empty,
  ErrorMessage,
  Field,
  Id,
  Loading,
  PageHeader,
  Select,
  TableBox,
  formatTime,
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
    { value: '', label: t('conversations.allAgents') },
    ...[...names.entries()].map(([id, name]) => ({
      value: id,
      label: name || t('agent.unnamedWithId', { id: id.slice(-8) }),
    })),
  ];

  const filtered = agentId !== '' || state !== '' || userId !== '';
  const clear = () => {
    setAgentId('');
    setState('');
    setUser('');
    setPage(0);
  };

  return (
    <>
      <PageHeader title={t('conversations.title')} description={t('conversations.description')} />
      <form className="toolbar" onSubmit={(e) => e.preventDefault()} aria-label={t('conversations.filter')}>
        <Select
          label={t('common.agent')}
          value={agentId}
          onChange={(v) => {
            setAgentId(v);
            setPage(0);
          }}
          options={agentOptions}
        />
        <Select
          label={t('conversations.state')}
          value={state}
          onChange={(v) => {
            setState(v);
            setPage(0);
          }}
          options={states.map((s) => ({
            value: s,
            label: s === '' ? t('conversations.anyState') : s.replace(/_/g, ' '),
          }))}
        />
        <Field
          label={t('chat.userId')}
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
        <Empty>
          {filtered ? (
            <>
              {t('conversations.noMatch')}{' '}
              <button type="button" className="link" onClick={clear}>
                {t('conversations.clearFilters')}
              </button>
            </>
          ) : (
            <>
              {t('conversations.empty')} <Link to={`${BASE}/chat`}>{t('dashboard.recent.startOne')}</Link>
            </>
          )}
        </Empty>
      ) : (
        <TableBox label={t('conversations.title')} stack>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('conversations.conversation')}</th>
                <th scope="col">{t('conversations.state')}</th>
                <th scope="col">{t('chat.userId')}</th>
                <th scope="col">{t('conversations.steps')}</th>
                <th scope="col">{t('conversations.lastActivity')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.map((c) => (
                <tr key={c.conversationId}>
                  <td data-label={t('conversations.conversation')}>
                    <Link to={`${BASE}/conversations/${c.conversationId}`}>
                      {t('conversation.with', { agent: names.get(c.agentId) || t('agent.unnamed') })}
                    </Link>{' '}
                    <Id value={c.conversationId} what={t('id.conversation')} />
                    <div className="muted small">
                      {t('common.version.short', { version: c.agentVersion })} · {c.environment}
                    </div>
                  </td>
                  <td data-label={t('conversations.state')}>
                    <Badge status={c.conversationState} />
                  </td>
                  <td data-label={t('chat.userId')}>{c.userId}</td>
                  <td data-label={t('conversations.steps')}>{c.conversationStepSize}</td>
                  <td data-label={t('conversations.lastActivity')}>{formatTime(c.lastModifiedOn)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <div className="pager">
        <button type="button" onClick={() => setPage(Math.max(0, page - 1))} disabled={page === 0}>
          {t('pager.previous')}
        </button>
        <span className="muted">{t('pager.page', { page: page + 1 })}</span>
        <button type="button" onClick={() => setPage(page + 1)} disabled={(list.data?.length ?? 0) < PAGE}>
          {t('pager.next')}
        </button>
      </div>
    </>
  );
}
