/** Talk to a deployed agent: start, send, quick replies, undo/redo, end, and each step's details in a drawer. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { Conversation } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Drawer } from '../../components/Drawer.tsx';
import { Badge, ErrorMessage, Field, Id, Loading, PageHeader, Select } from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import { startableDeployments } from '../../lib/deployments.ts';
import { idOfLocation } from '../../lib/uri.ts';
import { BASE, Link, navigate, useLocation } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';
import { StepDetails } from './StepDetails.tsx';

export function Chat({ agentId }: { agentId?: string }) {
  const { search } = useLocation();
  const conversationId = search.get('conversation') ?? undefined;
  return (
    <>
      <PageHeader title={t('chat.title')} description={t('chat.description')} />
      <StartForm agentId={agentId} environment={search.get('environment') ?? undefined} />
      {conversationId && <ConversationPanel key={conversationId} conversationId={conversationId} />}
    </>
  );
}

function StartForm({ agentId, environment }: { agentId?: string; environment?: string }) {
  const { api } = useAuth();
  const { canConverse } = usePermissions();
  const names = useAgentNames();
  const deployments = useQuery({ queryKey: ['deployments'], queryFn: api.deployments });
  // A start runs the newest READY version of an agent: older deployed versions are not offered.
  const ready = startableDeployments(deployments.data ?? []);
  const [choice, setChoice] = useState('');
  const [userId, setUserId] = useState('manager-user');
  const options = ready.map((d) => ({
    value: `${d.environment}|${d.agentId}`,
    label: t('chat.option', {
      agent: names.get(d.agentId) || t('agent.unnamedWithId', { id: d.agentId.slice(-8) }),
      version: d.agentVersion,
      environment: d.environment,
    }),
  }));

  useEffect(() => {
    if (choice !== '' || options.length === 0) return;
    const preferred =
      options.find((o) => o.value === `${environment ?? 'production'}|${agentId}`) ??
      options.find((o) => o.value.endsWith(`|${agentId}`)) ??
      options[0]!;
    setChoice(preferred.value);
  }, [options, choice, agentId, environment]);

  const start = useMutation({
    mutationFn: () => {
      const [env, id] = choice.split('|') as [string, string];
      return api.start(id, env, userId.trim() || undefined);
    },
    onSuccess: (conversation) => {
      navigate(
        `${BASE}/chat/${conversation.agentId}?environment=${conversation.environment}&conversation=${conversation.conversationId}`,
      );
    },
  });

  if (!canConverse) return <p className="read-only-note">{t('chat.readOnly')}</p>;
  if (deployments.isPending) return <Loading />;
  if (ready.length === 0) {
    return (
      <p className="empty">
        {t('chat.empty')} <Link to={`${BASE}/agents`}>{t('chat.emptyAction')}</Link>
      </p>
    );
  }
  return (
    <form
      className="panel toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        start.mutate();
      }}
      aria-label={t('chat.startForm')}
    >
      <Select
        label={t('common.agent')}
        value={choice}
        onChange={setChoice}
        options={options}
        hint={t('chat.versionHint')}
      />
      <Field label={t('chat.userId')} value={userId} onChange={setUserId} hint={t('chat.userIdHint')} />
      <button type="submit" className="primary" disabled={start.isPending || choice === ''}>
        {t('chat.start')}
      </button>
      <ErrorMessage error={start.error} />
    </form>
  );
}

/** Brings a transcript entry into view when it appears (the newest turn, or the one still streaming). */
const scrollIntoView = (element: HTMLElement | null) => {
  element?.scrollIntoView?.({ block: 'nearest' });
};

/** The running conversation: its transcript, the composer and the turn controls. */
function ConversationPanel({ conversationId }: { conversationId: string }) {
  const { api } = useAuth();
  const { canConverse, canWrite } = usePermissions();
  const names = useAgentNames();
  const queryClient = useQueryClient();
  const key = ['chat', conversationId];
  const conversation = useQuery({ queryKey: key, queryFn: () => api.conversation(conversationId) });
  const [input, setInput] = useState('');
  const [detail, setDetail] = useState<number>();
  const inputRef = useRef<HTMLInputElement>(null);

  const update = (data: Conversation) => queryClient.setQueryData(key, data);
  const refetch = async () => update(await api.conversation(conversationId));
  // While a turn runs: the message sent and the answer as far as it has streamed (LLM tasks stream token by token).
  const [pending, setPending] = useState<{ input: string; answer: string }>();
  const say = useMutation({
    mutationFn: (text: string) => {
      setPending({ input: text, answer: '' });
      return api.sayStreaming(conversationId, text, (token) =>
        setPending((p) => p && { ...p, answer: p.answer + token }),
      );
    },
    onSuccess: (data) => {
      update(data);
      setInput('');
      inputRef.current?.focus();
    },
    onSettled: () => setPending(undefined),
  });
  const undo = useMutation({ mutationFn: () => api.undo(conversationId), onSettled: refetch });
  const redo = useMutation({ mutationFn: () => api.redo(conversationId), onSettled: refetch });
  const end = useMutation({ mutationFn: () => api.end(conversationId), onSettled: refetch });
  const record = useMutation({
    mutationFn: () => api.recordTranscript(conversationId),
    onSuccess: (uri) => navigate(`${BASE}/transcripts/${idOfLocation(uri)}`),
  });

  if (conversation.isPending) return <Loading />;
  if (conversation.error) return <ErrorMessage error={conversation.error} />;
  const c = conversation.data;
  const outputs = c.conversationOutputs ?? [];
  const last = outputs[outputs.length - 1];
  const ended = c.conversationState === 'ENDED';
  const busy = say.isPending || undo.isPending || redo.isPending;

  return (
    <section className="chat panel" aria-labelledby="chat-h">
      <div className="chat-head">
        <h2 id="chat-h">{t('conversation.with', { agent: names.get(c.agentId) || t('agent.unnamed') })}</h2>
        <Id value={c.conversationId} what={t('id.conversation')} />
        <Badge status={c.conversationState} />
        <span className="muted small">
          {c.environment} · {t('chat.agentVersion', { version: c.agentVersion })}
          {c.userId ? ` · ${c.userId}` : ''}
        </span>
        <div className="actions">
          {canConverse && (
            <>
              <button type="button" onClick={() => undo.mutate()} disabled={!c.undoAvailable || busy}>
                {t('chat.undo')}
              </button>
              <button type="button" onClick={() => redo.mutate()} disabled={!c.redoAvailable || busy}>
                {t('chat.redo')}
              </button>
              <button type="button" onClick={() => end.mutate()} disabled={ended || busy}>
                {t('chat.end')}
              </button>
            </>
          )}
          <Link className="button" to={`${BASE}/conversations/${c.conversationId}`}>
            {t('chat.stored')}
          </Link>
          {canWrite && (
            <button type="button" onClick={() => record.mutate()} disabled={busy || record.isPending}>
              {t('chat.record')}
            </button>
          )}
        </div>
      </div>
      <ErrorMessage error={say.error ?? undo.error ?? redo.error ?? end.error ?? record.error} />
      <ol className="transcript" aria-label={t('chat.messages')} aria-live="polite">
        {outputs.map((step, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step's position is its identity (it is "Step n"); steps are only appended or taken off the end (undo)
          <li key={i} className="turn" ref={i === outputs.length - 1 ? scrollIntoView : undefined}>
            {step.input !== undefined && step.input !== '' && (
              <p className="bubble user">
                <span className="visually-hidden">{t('chat.youSaid')} </span>
                {step.input}
              </p>
            )}
            {(step.output ?? []).map((text, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a step's output texts are fixed once the step is done and may repeat; they are never reordered
              <p key={j} className="bubble agent">
                <span className="visually-hidden">{t('chat.agentSaid')} </span>
                {text}
              </p>
            ))}
            {(step.output ?? []).length === 0 && step.error === undefined && (
              <p className="bubble agent muted">
                <span className="visually-hidden">{t('chat.agentSaid')} </span>
                {t('chat.noOutput')}
              </p>
            )}
            {step.error !== undefined && (
              <div className="bubble agent turn-error">
                <p>
                  <strong>{t('chat.failed')}</strong> {step.error}
                </p>
                <button type="button" className="link small" onClick={() => setDetail(i)}>
                  {t('chat.failedDetails', { step: i + 1 })}
                </button>
              </div>
            )}
            <button type="button" className="link small" onClick={() => setDetail(i)}>
              {t('chat.stepDetails', { step: i + 1 })}
            </button>
          </li>
        ))}
        {pending && (
          <li className="turn" aria-busy="true" ref={scrollIntoView}>
            <p className="bubble user">
              <span className="visually-hidden">{t('chat.youSaid')} </span>
              {pending.input}
            </p>
            <p className="bubble agent muted">
              <span className="visually-hidden">{t('chat.agentSaid')} </span>
              {pending.answer || '…'}
            </p>
          </li>
        )}
      </ol>
      {canConverse && last?.quickReplies && last.quickReplies.length > 0 && !ended && (
        <fieldset className="quick-replies">
          <legend className="visually-hidden">{t('chat.quickReplies')}</legend>
          {last.quickReplies.map((q) => (
            <button type="button" key={q.value} onClick={() => say.mutate(q.value)} disabled={busy}>
              {q.value}
            </button>
          ))}
        </fieldset>
      )}
      {canConverse && (
        <form
          className="composer"
          onSubmit={(e) => {
            e.preventDefault();
            if (input.trim()) say.mutate(input);
          }}
        >
          <label htmlFor="chat-input" className="visually-hidden">
            {t('chat.message')}
          </label>
          <input
            id="chat-input"
            ref={inputRef}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            placeholder={ended ? t('chat.ended') : t('chat.typeMessage')}
            disabled={ended}
            autoComplete="off"
          />
          <button type="submit" className="primary" disabled={ended || busy || input.trim() === ''}>
            {t('chat.send')}
          </button>
        </form>
      )}
      <Drawer
        title={t('chat.stepTitle', { step: (detail ?? 0) + 1 })}
        open={detail !== undefined}
        onClose={() => setDetail(undefined)}
      >
        {detail !== undefined && <StepDetails conversation={c} index={detail} />}
      </Drawer>
    </section>
  );
}
