/** Routes -> screens. Every screen lives in its own folder under screens/. */
import { useEffect, type ReactNode } from 'react';
import { useResourceKinds } from './api/resources.ts';
import { useAuth } from './auth.tsx';
import { Layout } from './components/Layout.tsx';
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
  { pattern: '/', title: 'Dashboard', render: () => <Dashboard /> },
  { pattern: BASE, title: 'Dashboard', render: () => <Dashboard /> },
  { pattern: `${BASE}/agents`, title: 'Agents', render: () => <AgentList /> },
  { pattern: `${BASE}/agents/new`, title: 'New agent', render: () => <AgentCreate /> },
  { pattern: `${BASE}/agents/:id`, title: 'Agent', render: (p) => <AgentDetail key={p.id} id={p.id!} /> },
  {
    pattern: `${BASE}/resources/:kind`,
    title: 'Resources',
    render: (p) => <ResourceList key={p.kind} kindSlug={p.kind!} />,
  },
  {
    pattern: `${BASE}/resources/:kind/new`,
    title: 'New resource',
    render: (p) => <ResourceEditor key={`${p.kind}-new`} kindSlug={p.kind!} />,
  },
  {
    pattern: `${BASE}/resources/:kind/:id`,
    title: 'Resource',
    render: (p) => <ResourceEditor key={`${p.kind}-${p.id}`} kindSlug={p.kind!} id={p.id!} />,
  },
  { pattern: `${BASE}/chat`, title: 'Chat', render: () => <Chat /> },
  { pattern: `${BASE}/chat/:agentId`, title: 'Chat', render: (p) => <Chat agentId={p.agentId} /> },
  { pattern: `${BASE}/conversations`, title: 'Conversations', render: () => <ConversationList /> },
  {
    pattern: `${BASE}/conversations/:id`,
    title: 'Conversation',
    render: (p) => <ConversationDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/transcripts/:id`,
    title: 'Transcript',
    render: (p) => <TranscriptDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/transcripts/:id/runs/:runId`,
    title: 'Transcript run',
    render: (p) => <RunView key={p.runId} id={p.id!} runId={p.runId!} />,
  },
  {
    pattern: `${BASE}/groups/:id`,
    title: 'Group',
    render: (p) => <GroupDetail key={p.id} id={p.id!} />,
  },
  {
    pattern: `${BASE}/groups/:id/discussions/:discussionId`,
    title: 'Group discussion',
    render: (p) => <GroupDetail key={p.id} id={p.id!} discussionId={p.discussionId} />,
  },
  {
    pattern: `${BASE}/schedules/:id`,
    title: 'Schedule',
    render: (p) => <ScheduleDetail key={p.id} id={p.id!} />,
  },
  { pattern: `${BASE}/backup`, title: 'Import / Export', render: () => <ImportExport /> },
  { pattern: `${BASE}/secrets`, title: 'Secrets', render: () => <Secrets /> },
  { pattern: `${BASE}/triggers`, title: 'Triggers', render: () => <Triggers /> },
  { pattern: `${BASE}/channels`, title: 'Channels', render: () => <Channels /> },
  {
    pattern: `${BASE}/channels/:agentId`,
    title: 'Channels',
    render: (p) => <Channels key={p.agentId} agentId={p.agentId} />,
  },
  { pattern: `${BASE}/logs`, title: 'Logs', render: () => <Logs /> },
  { pattern: `${BASE}/inbox`, title: 'Inbox', render: () => <Inbox /> },
  { pattern: `${BASE}/memory`, title: 'User memory', render: () => <UserMemoryUsers /> },
  {
    pattern: `${BASE}/memory/:userId`,
    title: 'User memory',
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
    ? 'Signing in'
    : signInRequired
      ? status === 'signed-out'
        ? 'Signed out'
        : 'Sign in'
      : ((kind ? `${kind.label}` : found?.route.title) ?? 'Not found');

  useEffect(() => {
    document.title = `${title} · Agent manager`;
  }, [title]);

  // Nothing asks the service anything before the sign-in configuration is read (and, with authentication on, a
  // token obtained).
  if (waiting) {
    return (
      <div className="splash" role="status">
        {status === 'redirecting' ? 'Going to the identity provider…' : 'Loading…'}
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
          <PageHeader title="Page not found" />
          <p>
            Nothing lives at <code>{pathname}</code>. <Link to={BASE}>Go to the dashboard</Link>.
          </p>
        </>
      )}
    </Layout>
  );
}
