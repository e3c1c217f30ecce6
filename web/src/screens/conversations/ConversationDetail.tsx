/** One stored conversation with every step in detail. */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Badge, ConfirmButton, ErrorMessage, Loading, PageHeader, formatTime, shortId } from '../../components/ui.tsx';
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

  if (conversation.isPending) return <Loading />;
  if (conversation.error)
    return (
      <>
        <PageHeader title="Conversation" />
        <ErrorMessage error={conversation.error} />
      </>
    );
  const c = conversation.data;
  return (
    <>
      <PageHeader
        title={`Conversation ${shortId(c.conversationId)}`}
        description={
          <>
            with <Link to={`${BASE}/agents/${c.agentId}`}>{names.get(c.agentId) || shortId(c.agentId)}</Link> v
            {c.agentVersion} in {c.environment}
            {c.userId ? `, user ${c.userId}` : ''}
          </>
        }
      >
        {canConverse && c.conversationState !== 'ENDED' && (
          <Link
            className="button primary"
            to={`${BASE}/chat/${c.agentId}?environment=${c.environment}&conversation=${c.conversationId}`}
          >
            Continue in chat
          </Link>
        )}
        {canConverse && (
          <ConfirmButton question="Delete this conversation?" onConfirm={() => remove.mutate()}>
            Delete
          </ConfirmButton>
        )}
      </PageHeader>
      <ErrorMessage error={remove.error} />
      <p>
        <Badge status={c.conversationState} />{' '}
        <span className="muted">
          started {formatTime(c.createdOn)} · last activity {formatTime(c.lastModifiedOn)}
        </span>
      </p>
      <ol className="steps">
        {(c.conversationOutputs ?? []).map((_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step's position is its identity (it is "Step n"); the stored steps are never reordered
          <li key={i} className="panel">
            <h2>Step {i + 1}</h2>
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
