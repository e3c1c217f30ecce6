/** One stored conversation with every step in detail. */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useAuth, usePermissions } from '../../auth.tsx';
import { useEffect } from 'react';
import {
  Badge,
  ConfirmButton,
  ErrorMessage,
  Id,
  Loading,
  Named,
  PageHeader,
  formatTime,
} from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { BASE, Link, navigate } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';
import { ConversationProperties, StepDetails } from '../chat/StepDetails.tsx';

export function ConversationDetail({ id }: { id: string }) {
  const { api } = useAuth();
  const { canConverse } = usePermissions();
  const names = useAgentNames();
  const conversation = useQuery({ queryKey: ['stored-conversation', id], queryFn: () => api.storedConversation(id) });
  const remove = useMutation({
    mutationFn: () => api.deleteConversation(id),
    onSuccess: () => navigate(`${BASE}/conversations`),
  });

  // A link to one step (`#step-3`, from the pipeline picture) lands on it once the steps are shown.
  const loaded = conversation.data !== undefined;
  useEffect(() => {
    if (!loaded || !window.location.hash) return;
    const target = document.getElementById(window.location.hash.slice(1));
    target?.scrollIntoView?.({ block: 'start' });
    target?.focus();
  }, [loaded]);

  if (conversation.isPending) return <Loading />;
  if (conversation.error)
    return (
      <>
        <PageHeader title={t('conversations.conversation')} />
        <ErrorMessage error={conversation.error} />
      </>
    );
  const c = conversation.data;
  return (
    <>
      <PageHeader
        title={t('conversation.with', { agent: names.get(c.agentId) || t('agent.unnamed') })}
        description={
          <>
            <Id value={c.conversationId} what={t('id.conversation')} /> ·{' '}
            <Named
              name={names.get(c.agentId)}
              id={c.agentId}
              unnamed={t('agent.unnamed')}
              what={t('id.agent')}
              to={`${BASE}/agents/${c.agentId}`}
            />{' '}
            {t('conversationDetail.where', { version: c.agentVersion, environment: c.environment })}
            {c.userId ? t('conversationDetail.user', { user: c.userId }) : ''}
          </>
        }
      >
        {canConverse && c.conversationState !== 'ENDED' && (
          <Link
            className="button primary"
            to={`${BASE}/chat/${c.agentId}?environment=${c.environment}&conversation=${c.conversationId}`}
          >
            {t('conversationDetail.continue')}
          </Link>
        )}
        {canConverse && (
          <ConfirmButton question={t('conversationDetail.deleteQuestion')} onConfirm={() => remove.mutate()}>
            {t('common.delete')}
          </ConfirmButton>
        )}
      </PageHeader>
      <ErrorMessage error={remove.error} />
      <p>
        <Badge status={c.conversationState} />{' '}
        <span className="muted">
          {t('conversationDetail.times', { started: formatTime(c.createdOn), last: formatTime(c.lastModifiedOn) })}
        </span>
      </p>
      <ol className="steps">
        {(c.conversationOutputs ?? []).map((_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step's position is its identity (it is "Step n"); the stored steps are never reordered
          <li key={i} className="panel">
            <h2 id={`step-${i + 1}`} tabIndex={-1}>
              {t('chat.stepTitle', { step: i + 1 })}
            </h2>
            <StepDetails conversation={c} index={i} showProperties={false} />
          </li>
        ))}
      </ol>
      <div className="panel">
        <ConversationProperties conversation={c} />
      </div>
    </>
  );
}
