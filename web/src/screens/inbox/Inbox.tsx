/**
 * The inbox of turns waiting for a person (human in the loop), live from the service's event stream: what the
 * user asked, what the agent said so far, the tool calls waiting for approval (their arguments editable), and the
 * decisions approve, reject, or answer in place of the agent.
 */
import { useEffect, useState } from 'react';
import type { Decision, PendingApproval } from '../../api/types.ts';
import { useAuth } from '../../auth.tsx';
import { Empty, ErrorMessage, Field, formatTime, Id, PageHeader } from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { sseEvents } from '../../lib/sse.ts';
import { agentLabel, useAgentNames } from '../agents/useAgentNames.ts';
import { BASE, Link } from '../../router.tsx';

type StreamState = 'connecting' | 'live' | 'closed';

export function Inbox() {
  const { api } = useAuth();
  const [items, setItems] = useState<readonly PendingApproval[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    const abort = new AbortController();
    (async () => {
      try {
        const response = await api.pendingApprovalStream(abort.signal);
        setState('live');
        for await (const event of sseEvents(response.body!)) {
          if (event.event === 'pending-approvals') setItems(JSON.parse(event.data) as PendingApproval[]);
        }
        setState('closed');
      } catch (e) {
        if (abort.signal.aborted) return;
        setError(e);
        setState('closed');
      }
    })();
    return () => abort.abort();
  }, [api]);

  return (
    <>
      <PageHeader title={t('inbox.inbox')} description={t('inbox.turnsWaitingForA')} />
      <p className="muted" role="status">
        {t('inbox.stream', { state })}
        {state === 'live' ? ` · ${items.length} waiting` : ''}
      </p>
      <ErrorMessage error={error} title={t('inbox.theInboxStreamStopped')} />
      {items.length === 0 ? (
        <Empty>
          {t('inbox.empty')} <Link to={`${BASE}/conversations`}>{t('inbox.emptyAction')}</Link>
        </Empty>
      ) : (
        <ul className="inbox" aria-label={t('inbox.waitingTurns')}>
          {items.map((item) => (
            <InboxItem key={item.approvalId} item={item} />
          ))}
        </ul>
      )}
    </>
  );
}

function InboxItem({ item }: { item: PendingApproval }) {
  const { api } = useAuth();
  const names = useAgentNames();
  const [answer, setAnswer] = useState('');
  const [reason, setReason] = useState('');
  const [edited, setEdited] = useState<Record<string, string>>(() =>
    Object.fromEntries(item.toolCalls.map((call) => [call.toolCallId, JSON.stringify(call.arguments, null, 2)])),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  const decide = async (decision: Decision['decision']) => {
    setError(undefined);
    let args: Decision['arguments'];
    try {
      if (decision === 'approve' && item.toolCalls.length > 0)
        args = Object.fromEntries(
          item.toolCalls.map((call) => [call.toolCallId, JSON.parse(edited[call.toolCallId] ?? '{}')]),
        );
    } catch {
      setError(new Error(t('inbox.theArgumentsMustBe')));
      return;
    }
    setBusy(true);
    try {
      await api.resume(item.conversationId, {
        decision,
        approvalId: item.approvalId,
        ...(decision === 'answer' ? { answer } : {}),
        ...(reason.trim() === '' ? {} : { reason }),
        ...(args ? { arguments: args } : {}),
      });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const heading = `${item.pauseType === 'tool-approval' ? t('inbox.toolCalls') : t('inbox.pausedTurn')} · ${item.userId}`;
  return (
    <li className="card" aria-label={heading}>
      <h2>
        {heading}
        {item.escalated && <span className="badge badge-warn">{t('inbox.escalated')}</span>}
      </h2>
      <p className="muted small">
        {t('inbox.agentVSince', {
          agent: agentLabel(names, item.agentId),
          agentVersion: item.agentVersion,
          environment: item.environment,
          time: formatTime(item.pausedAt),
        })}{' '}
        <Link to={`${BASE}/conversations/${item.conversationId}`}>{t('inbox.conversation')}</Link>{' '}
        <Id value={item.conversationId} what={t('id.conversation')} />
        {item.queuedMessages > 0 && ` · ${item.queuedMessages} message(s) queued`}
      </p>
      <dl>
        <dt>{t('inbox.userSaid')}</dt>
        <dd>{item.input || <span className="muted">{t('inbox.nothing')}</span>}</dd>
        {item.output.length > 0 && (
          <>
            <dt>{t('inbox.agentSaidSoFar')}</dt>
            <dd>{item.output.join(' ')}</dd>
          </>
        )}
      </dl>
      {item.toolCalls.map((call) => (
        <Field
          key={call.toolCallId}
          label={t('inbox.argumentsOf', { tool: call.tool, toolCallId: call.toolCallId })}
          multiline
          value={edited[call.toolCallId] ?? ''}
          onChange={(value) => setEdited({ ...edited, [call.toolCallId]: value })}
          hint={t('inbox.jsonApprovingRunsThe')}
        />
      ))}
      <Field label={t('inbox.answerInPlaceOf')} multiline value={answer} onChange={setAnswer} />
      <Field label={t('inbox.reason')} value={reason} onChange={setReason} hint={t('inbox.recordedInTheAudit')} />
      <div className="actions">
        <button type="button" className="primary" disabled={busy} onClick={() => decide('approve')}>
          {t('inbox.approve')}
        </button>
        <button type="button" disabled={busy} onClick={() => decide('reject')}>
          {t('inbox.reject')}
        </button>
        <button type="button" disabled={busy || answer.trim() === ''} onClick={() => decide('answer')}>
          {t('inbox.sendAnswer')}
        </button>
      </div>
      <ErrorMessage error={error} title={t('inbox.theDecisionWasNot')} />
    </li>
  );
}
