/** Routes -> screens. Every screen lives in its own folder under screens/. */
import { useEffect, type ReactNode } from 'react';
import { useResourceKinds } from './api/resources.ts';
import { useAuth } from './auth.tsx';
import { Layout } from './components/Layout.tsx';
import { t } from './i18n/index.ts';
import { PageHeader } from './components/ui.tsx';
import { BASE, Link, match, useLocation } from './router.tsx';
import { AgentCreate } from './screens/agents/AgentCreate.tsx';
import { AgentDetail } from './screens/agents/AgentDetail.tsx';
import { AgentList } from './screens/agents/AgentList.tsx';
import { ImportExport } from './screens/backup/ImportExport.tsx';
import { Channels } from './screens/channels/Channels.tsx';
import { Chat } from './screens/chat/Chat.tsx';
import { ConversationDetail } from './screens/conversations/ConversationDetail.tsx';
import { ConversationList } from './screens/conversations/ConversationList.tsx';
import { Dashboard } from './screens/dashboard/Dashboard.tsx';
import { GroupDetail } from './screens/groups/GroupDetail.tsx';
import { Inbox } from './screens/inbox/Inbox.tsx';
import { Logs } from './screens/logs/Logs.tsx';
import { ResourceEditor } from './screens/resources/ResourceEditor.tsx';
import { ResourceList } from './screens/resources/ResourceList.tsx';
import { ScheduleDetail } from './screens/schedules/ScheduleDetail.tsx';
import { Secrets } from './screens/secrets/Secrets.tsx';
import { SignIn } from './screens/signin/SignIn.tsx';
import { RunView } from './screens/transcripts/RunView.tsx';
import { TranscriptDetail } from './screens/transcripts/TranscriptDetail.tsx';
import { Triggers } from './screens/triggers/Triggers.tsx';
import { UserMemory, UserMemoryUsers } from './screens/memory/UserMemory.tsx';

interface Route {
  readonly pattern: string;
  readonly title: string;
  render(params: Record<string, string>): ReactNode;
}

const routes: readonly Route[] = [
  { pattern: '/', title: t('nav.dashboard'), render: () => <Dashboard /> },
  { pattern: BASE, title: t('nav.dashboard'), render: () => <Dashboard /> },
  { pattern: `${BASE}/agents`, title: t('nav.agents'), render: () => <AgentList /> },
  { pattern: `${BASE}/agents/new`, title: t('agents.new'), render: () => <AgentCreate /> },
  { pattern: `${BASE}/agents/:id`, title: t('common.agent'), render: (p) => <AgentDetail key={p.id} id={p.id!} /> },
  {
    pattern: `${BASE}/resources/:kind`,
    title: t('nav.resources'),
    render: (p) => <ResourceList key={p.kind} kindSlug={p.kind!} />,
  },
  {
    pattern: `${BASE}/resources/:kind/new`,
    title: t('route.newResource'),
    render: (p) => <ResourceEditor key={`${p.kind}-new`} kindSlug={p.kind!} />,
  },
  {
    pattern: `${BASE}/resources/:kind/:id`,
    title: t('route.resource'),
    render: (p) => <ResourceEditor key={`${p.kind}-${p.id}`} kindSlug={p.kind!} id={p.id!} />,
  },
  { pattern: `${BASE}/chat`, title: t('nav.chat'), render: () => <Chat /> },
  { pattern: `${BASE}/chat/:agentId`, title: t('nav.chat'), render: (p) => <Chat agentId={p.agentId} /> },
  { pattern: `${BASE}/conversations`, title: t('nav.conversations'), render: () => <ConversationList /> },
  {
    pattern: `${BASE}/conversations/:id`,
    title: t('conversations.conversation'),
    render: (p) => <ConversationDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/transcripts/:id`,
    title: t('route.transcript'),
    render: (p) => <TranscriptDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/transcripts/:id/runs/:runId`,
    title: t('route.transcriptRun'),
    render: (p) => <RunView key={p.runId} id={p.id!} runId={p.runId!} />,
  },
  {
    pattern: `${BASE}/groups/:id`,
    title: t('route.group'),
    render: (p) => <GroupDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/groups/:id/discussions/:discussionId`,
    title: t('route.groupDiscussion'),
    render: (p) => <GroupDetail key={p.id} id={p.id!} discussionId={p.discussionId} />,
  },
  {
    pattern: `${BASE}/schedules/:id`,
    title: t('route.schedule'),
    render: (p) => <ScheduleDetail key={p.id} id={p.id!} />,
  },
  { pattern: `${BASE}/backup`, title: t('nav.backup'), render: () => <ImportExport /> },
  { pattern: `${BASE}/secrets`, title: t('nav.secrets'), render: () => <Secrets /> },
  { pattern: `${BASE}/triggers`, title: t('nav.triggers'), render: () => <Triggers /> },
  { pattern: `${BASE}/channels`, title: t('nav.channels'), render: () => <Channels /> },
  {
    pattern: `${BASE}/channels/:agentId`,
    title: t('nav.channels'),
    render: (p) => <Channels key={p.agentId} agentId={p.agentId} />,
  },
  { pattern: `${BASE}/logs`, title: t('nav.logs'), render: () => <Logs /> },
  { pattern: `${BASE}/inbox`, title: t('nav.inbox'), render: () => <Inbox /> },
  { pattern: `${BASE}/memory`, title: t('nav.userMemory'), render: () => <UserMemoryUsers /> },
  {
    pattern: `${BASE}/memory/:userId`,
    title: t('nav.userMemory'),
    render: (p) => <UserMemory key={p.userId} userId={p.userId!} />,
  },
];

function resolve(pathname: string): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    const params = match(route.pattern, pathname);
    if (params) return { route, params };
  }
  return undefined;
}

export function App() {
  const { pathname } = useLocation();
  const { status } = useAuth();
  const found = resolve(pathname);
  const kinds = useResourceKinds();
  const kind = found?.params.kind ? kinds?.bySlug(found.params.kind) : undefined;
  const waiting = status === 'starting' || status === 'redirecting';
  const signInRequired = status === 'signed-out' || status === 'needs-sign-in';
  const title = waiting
    ? t('route.signingIn')
    : signInRequired
      ? status === 'signed-out'
        ? t('route.signedOut')
        : t('route.signIn')
      : ((kind ? `${kind.label}` : found?.route.title) ?? t('route.notFound'));

  useEffect(() => {
    document.title = `${title} · ${t('app.name')}`;
  }, [title]);

  // Nothing asks the service anything before the sign-in configuration is read (and, with authentication on, a
  // token obtained).
  if (waiting) {
    return (
      <div className="splash" role="status">
        {status === 'redirecting' ? t('route.redirecting') : t('common.loading')}
      </div>
    );
  }

  return (
    <Layout>
      {signInRequired ? (
        <SignIn />
      ) : found ? (
        found.route.render(found.params)
      ) : (
        <>
          <PageHeader title={t('route.pageNotFound')} />
          <p className="empty">
            {t('route.nothingAt')} <code>{pathname}</code>. <Link to={BASE}>{t('route.toDashboard')}</Link>
          </p>
        </>
      )}
    </Layout>
  );
}
