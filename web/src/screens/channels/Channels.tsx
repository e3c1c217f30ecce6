/**
 * Messaging channels of an agent: the webhook address to give each platform, the channel's settings (secrets are
 * vault references, never values) and the messages received (state, conversation, why one failed), refreshed while
 * the screen is open.
 */
import { useQuery } from '@tanstack/react-query';
import type { AgentChannel } from '../../api/types.ts';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Tx } from '../../i18n/Tx.tsx';
import {
  Badge,
  Empty,
  ErrorMessage,
  Loading,
  PageHeader,
  Select,
  formatTime,
  shortId,
  TableBox,
} from '../../components/ui.tsx';
import { BASE, Link, navigate } from '../../router.tsx';
import { agentLabel, useAgentNames } from '../agents/useAgentNames.ts';

const AGENTS = '/agentstore/agents';
const REFRESH_MILLIS = 5000;

/** The webhook path of a channel type the service serves (`svc://ai.svc.channel.<platform>`), if any. */
function webhookOf(type: string, agentId: string): string | undefined {
  const platform = /^svc:\/\/ai\.svc\.channel\.(facebook|slack)$/.exec(type)?.[1];
  return platform === undefined ? undefined : `${window.location.origin}/channels/${platform}/${agentId}`;
}

export function Channels({ agentId }: { agentId?: string }) {
  const names = useAgentNames();
  const options = [
    { value: '', label: t('channels.chooseAnAgent') },
    ...[...names.entries()].map(([id, name]) => ({ value: id, label: name || agentLabel(names, id) })),
  ];
  return (
    <>
      <PageHeader title={t('channels.channels')} description={t('channels.messagingPlatformsAnAgent')} />
      <div className="toolbar">
        <Select
          label={t('channels.agent')}
          value={agentId ?? ''}
          onChange={(id) => navigate(id ? `${BASE}/channels/${id}` : `${BASE}/channels`)}
          options={options}
        />
      </div>
      {agentId && <AgentChannels agentId={agentId} />}
    </>
  );
}

function AgentChannels({ agentId }: { agentId: string }) {
  const { api } = useAuth();
  const version = useQuery({
    queryKey: ['currentversion', AGENTS, agentId],
    queryFn: () => api.currentVersion(AGENTS, agentId),
  });
  const agent = useQuery({
    queryKey: ['resource', AGENTS, agentId, version.data],
    queryFn: () => api.read<{ channels?: AgentChannel[] }>(AGENTS, agentId, version.data!),
    enabled: version.data !== undefined,
  });
  const messages = useQuery({
    queryKey: ['channel-messages', agentId],
    queryFn: () => api.channelMessages(agentId),
    refetchInterval: REFRESH_MILLIS,
  });
  if (version.error || agent.error) return <ErrorMessage error={version.error ?? agent.error} />;
  if (!agent.data) return <Loading />;
  const channels = agent.data.channels ?? [];
  return (
    <>
      <section className="panel" aria-labelledby="channels-h">
        <h2 id="channels-h">{t('channels.channelsOfVersion', { version: version.data })}</h2>
        {channels.length === 0 && (
          <Empty>
            <Tx
              k="channels.noChannels"
              values={{
                field: <code>channels</code>,
                edit: <Link to={`${BASE}/resources/agents/${agentId}`}>{t('channels.editAsJson')}</Link>,
              }}
            />
          </Empty>
        )}
        {channels.map((channel) => {
          const webhook = webhookOf(channel.type, agentId);
          return (
            <dl className="summary" key={`${channel.type} ${JSON.stringify(channel.config)}`} data-testid="channel">
              <dt>{t('channels.type')}</dt>
              <dd>{channel.type}</dd>
              <dt>{t('channels.webhook')}</dt>
              <dd>{webhook ? <code>{webhook}</code> : t('channels.notServed')}</dd>
              {Object.entries(channel.config ?? {}).map(([name, value]) => [
                <dt key={`${name}-dt`}>{name}</dt>,
                <dd key={`${name}-dd`}>
                  <code>{value}</code>
                </dd>,
              ])}
            </dl>
          );
        })}
        <p className="muted">
          {t('channels.channelsAnswerWhileThe')} <Link to={`${BASE}/secrets`}>{t('channels.secrets')}</Link>.
        </p>
      </section>
      <section className="panel" aria-labelledby="messages-h">
        <h2 id="messages-h">{t('channels.messagesReceived')}</h2>
        <ErrorMessage error={messages.error} />
        {messages.data?.length === 0 && <Empty>{t('channels.noMessagesYet')}</Empty>}
        {messages.data && messages.data.length > 0 && (
          <TableBox label={t('table.messages')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('channels.received')}</th>
                  <th scope="col">{t('channels.platform')}</th>
                  <th scope="col">{t('channels.from')}</th>
                  <th scope="col">{t('channels.message')}</th>
                  <th scope="col">{t('channels.state')}</th>
                  <th scope="col">{t('channels.conversation')}</th>
                </tr>
              </thead>
              <tbody>
                {messages.data.map((message) => (
                  <tr key={message.id}>
                    <td>{formatTime(message.receivedOn)}</td>
                    <td>{message.platform}</td>
                    <td>{message.senderKey}</td>
                    <td>{message.input}</td>
                    <td>
                      <Badge status={message.state} />
                      {message.detail && <div className="muted small">{message.detail}</div>}
                    </td>
                    <td>
                      {message.conversationId && (
                        <Link to={`${BASE}/conversations/${message.conversationId}`}>
                          {shortId(message.conversationId)}
                        </Link>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
      </section>
    </>
  );
}
