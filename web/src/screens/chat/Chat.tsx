/** Talk to a deployed agent: start, send, quick replies, undo/redo, end, and each step's details in a drawer. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { Conversation } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Drawer } from '../../components/Drawer.tsx';
import { Badge, ErrorMessage, Field, Loading, PageHeader, Select, shortId } from '../../components/ui.tsx';
import { idOfLocation } from '../../lib/uri.ts';
import { BASE, Link, navigate, useLocation } from '../../router.tsx';
import { useAgentNames } from '../agents/useAgentNames.ts';
import { StepDetails } from './StepDetails.tsx';

export function Chat({ agentId }: { agentId?: string }) {
  const { search } = useLocation();
  const conversationId = search.get('conversation') ?? undefined;
  return (
    <>
      <PageHeader
        title="Chat"
        description="Talk to a deployed agent. Open a step's details to see what the pipeline did."
      />
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
  const ready = (deployments.data ?? []).filter((d) => d.status === 'READY');
  const [choice, setChoice] = useState('');
  const [userId, setUserId] = useState('manager-user');
  const options = ready.map((d) => ({
    value: `${d.environment}|${d.agentId}`,
    label: `${names.get(d.agentId) || shortId(d.agentId)} v${d.agentVersion} (${d.environment})`,
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

  if (!canConverse)
    return (
      <p className="read-only-note">
        Your role reads conversations but does not chat: starting conversations and sending messages need svc-user,
        svc-editor or svc-admin.
      </p>
    );
  if (deployments.isPending) return <Loading />;
  if (ready.length === 0) {
    return (
      <p className="empty">
        No agent is deployed and ready. <Link to={`${BASE}/agents`}>Deploy one</Link> first.
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
      aria-label="Start a conversation"
    >
      <Select label="Agent" value={choice} onChange={setChoice} options={options} />
      <Field label="User id" value={userId} onChange={setUserId} hint="Long-term properties are kept per user." />
      <button type="submit" className="primary" disabled={start.isPending || choice === ''}>
        Start conversation
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
        <h2 id="chat-h">
          Conversation <code>{shortId(c.conversationId)}</code>
        </h2>
        <Badge status={c.conversationState} />
        <span className="muted small">
          {c.environment} · agent v{c.agentVersion}
          {c.userId ? ` · ${c.userId}` : ''}
        </span>
        <div className="actions">
          {canConverse && (
            <>
              <button type="button" onClick={() => undo.mutate()} disabled={!c.undoAvailable || busy}>
                Undo
              </button>
              <button type="button" onClick={() => redo.mutate()} disabled={!c.redoAvailable || busy}>
                Redo
              </button>
              <button type="button" onClick={() => end.mutate()} disabled={ended || busy}>
                End
              </button>
            </>
          )}
          <Link className="button" to={`${BASE}/conversations/${c.conversationId}`}>
            Stored record
          </Link>
          {canWrite && (
            <button type="button" onClick={() => record.mutate()} disabled={busy || record.isPending}>
              Record transcript
            </button>
          )}
        </div>
      </div>
      <ErrorMessage error={say.error ?? undo.error ?? redo.error ?? end.error ?? record.error} />
      <ol className="transcript" aria-label="Messages" aria-live="polite">
        {outputs.map((step, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step's position is its identity (it is "Step n"); steps are only appended or taken off the end (undo)
          <li key={i} className="turn" ref={i === outputs.length - 1 ? scrollIntoView : undefined}>
            {step.input !== undefined && step.input !== '' && (
              <p className="bubble user">
                <span className="visually-hidden">You said: </span>
                {step.input}
              </p>
            )}
            {(step.output ?? []).map((text, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a step's output texts are fixed once the step is done and may repeat; they are never reordered
              <p key={j} className="bubble agent">
                <span className="visually-hidden">Agent: </span>
                {text}
              </p>
            ))}
            {(step.output ?? []).length === 0 && step.error === undefined && (
              <p className="bubble agent muted">
                <span className="visually-hidden">Agent: </span>(no output)
              </p>
            )}
            {step.error !== undefined && (
              <p className="bubble agent turn-error">
                <strong>This turn failed:</strong> {step.error}
              </p>
            )}
            <button
              type="button"
              className="link small"
              onClick={() => setDetail(i)}
              aria-label={`Details of step ${i + 1}`}
            >
              Step {i + 1} details
            </button>
          </li>
        ))}
        {pending && (
          <li className="turn" aria-busy="true" ref={scrollIntoView}>
            <p className="bubble user">
              <span className="visually-hidden">You said: </span>
              {pending.input}
            </p>
            <p className="bubble agent muted">
              <span className="visually-hidden">Agent: </span>
              {pending.answer || '…'}
            </p>
          </li>
        )}
      </ol>
      {canConverse && last?.quickReplies && last.quickReplies.length > 0 && !ended && (
        <fieldset className="quick-replies">
          <legend className="visually-hidden">Quick replies</legend>
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
            Message
          </label>
          <input
            id="chat-input"
            ref={inputRef}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            placeholder={ended ? 'The conversation has ended' : 'Type a message'}
            disabled={ended}
            autoComplete="off"
          />
          <button type="submit" className="primary" disabled={ended || busy || input.trim() === ''}>
            Send
          </button>
        </form>
      )}
      <Drawer title={`Step ${(detail ?? 0) + 1}`} open={detail !== undefined} onClose={() => setDetail(undefined)}>
        {detail !== undefined && <StepDetails conversation={c} index={detail} />}
      </Drawer>
    </section>
  );
}
