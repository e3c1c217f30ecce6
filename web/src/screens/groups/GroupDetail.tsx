/**
 * One group: its members, moderator and style; asking it a question (each answer appears as it comes); its past
 * discussions; a discussion's transcript phase by phase with the moderator's conclusion, and follow-up questions.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Group, GroupContribution, GroupDiscussion } from '../../api/types.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import {
  Badge,
  Empty,
  ErrorMessage,
  Field,
  Loading,
  PageHeader,
  formatTime,
  TableBox,
  FocusFormButton,
} from '../../components/ui.tsx';
import { BASE, Link, navigate } from '../../router.tsx';
import { agentLabel, useAgentNames } from '../agents/useAgentNames.ts';

const STORE = '/groupstore/groups';

export function GroupDetail({ id, discussionId }: { id: string; discussionId?: string }) {
  const { api } = useAuth();
  const names = useAgentNames();
  const version = useQuery({ queryKey: ['currentversion', STORE, id], queryFn: () => api.currentVersion(STORE, id) });
  const group = useQuery({
    queryKey: ['resource', STORE, id, version.data],
    queryFn: () => api.read<Group>(STORE, id, version.data!),
    enabled: version.data !== undefined,
  });
  const descriptor = useQuery({ queryKey: ['descriptor', id], queryFn: () => api.descriptor(id) });
  if (version.error || group.error) return <ErrorMessage error={version.error ?? group.error} />;
  if (!group.data) return <Loading />;
  const agentName = (agentId: string) => agentLabel(names, agentId);
  return (
    <>
      <PageHeader
        title={descriptor.data?.name || group.data.name || t('groupDetail.group')}
        description={t('groupDetail.aGroupDiscussingIn', { style: group.data.style, version: version.data })}
      >
        <Link className="button" to={`${BASE}/resources/groups/${id}`}>
          {t('groupDetail.editAsJson')}
        </Link>
      </PageHeader>
      <section className="panel" aria-labelledby="members-h">
        <h2 id="members-h">{t('groupDetail.members')}</h2>
        <TableBox label={t('table.members')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('groupDetail.name')}</th>
                <th scope="col">{t('groupDetail.agent')}</th>
                <th scope="col">{t('groupDetail.role')}</th>
              </tr>
            </thead>
            <tbody>
              {group.data.members.map((member) => (
                <tr key={`${member.agentId} ${member.displayName}`}>
                  <td>{member.displayName}</td>
                  <td>
                    <Link to={`${BASE}/agents/${member.agentId}`}>{agentName(member.agentId)}</Link>
                  </td>
                  <td>{member.role ?? ''}</td>
                </tr>
              ))}
              <tr>
                <td>{t('groupDetail.moderator')}</td>
                <td>
                  <Link to={`${BASE}/agents/${group.data.moderatorAgentId}`}>
                    {agentName(group.data.moderatorAgentId)}
                  </Link>
                </td>
                <td>{t('groupDetail.synthesises')}</td>
              </tr>
            </tbody>
          </table>
        </TableBox>
      </section>
      {discussionId ? <DiscussionView groupId={id} discussionId={discussionId} /> : <Discussions groupId={id} />}
    </>
  );
}

function Ask({ groupId, discussionId, label }: { groupId: string; discussionId?: string; label: string }) {
  const { api } = useAuth();
  const { canConverse } = usePermissions();
  const queryClient = useQueryClient();
  const [input, setInput] = useState('');
  const [live, setLive] = useState<GroupContribution[]>([]);
  const ask = useMutation({
    mutationFn: () => {
      setLive([]);
      return api.askGroup(groupId, discussionId, input, (contribution) => setLive((all) => [...all, contribution]));
    },
    onSuccess: async (discussion) => {
      setInput('');
      setLive([]);
      await queryClient.invalidateQueries({ queryKey: ['group-discussions', groupId] });
      queryClient.setQueryData(['group-discussion', groupId, discussion.id], discussion);
      navigate(`${BASE}/groups/${groupId}/discussions/${discussion.id}`);
    },
  });
  if (!canConverse) return null;
  return (
    <form
      id="ask-form"
      className="panel"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
        if (input.trim() !== '') ask.mutate();
      }}
    >
      <Field label={t('groupDetail.question')} value={input} onChange={setInput} />
      <button type="submit" className="primary" disabled={ask.isPending || input.trim() === ''}>
        {ask.isPending ? t('groupDetail.discussing') : label}
      </button>
      {live.length > 0 && (
        <ol className="steps" aria-label={t('groupDetail.answersSoFar')}>
          {live.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the live list only grows
            <li key={i}>
              <strong>{c.speaker.displayName}</strong> ({c.phase}): {c.text ?? c.status}
            </li>
          ))}
        </ol>
      )}
      <ErrorMessage error={ask.error} />
    </form>
  );
}

function Discussions({ groupId }: { groupId: string }) {
  const { api } = useAuth();
  const list = useQuery({ queryKey: ['group-discussions', groupId], queryFn: () => api.groupDiscussions(groupId) });
  return (
    <>
      <Ask groupId={groupId} label={t('groupDetail.askTheGroup')} />
      <section className="panel" aria-labelledby="discussions-h">
        <h2 id="discussions-h">{t('groupDetail.discussions')}</h2>
        <ErrorMessage error={list.error} />
        {list.data?.length === 0 && (
          <Empty>
            {t('groupDetail.noDiscussionsYet')}{' '}
            <FocusFormButton formId="ask-form">{t('groupDetail.askFirst')}</FocusFormButton>
          </Empty>
        )}
        {list.data && list.data.length > 0 && (
          <TableBox label={t('table.discussions')}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('groupDetail.question')}</th>
                  <th scope="col">{t('groupDetail.state')}</th>
                  <th scope="col">{t('groupDetail.started')}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Link to={`${BASE}/groups/${groupId}/discussions/${d.id}`}>{d.questions[0]?.input ?? d.id}</Link>
                    </td>
                    <td>
                      <Badge status={d.state === 'DONE' ? 'READY' : 'IN_PROGRESS'} label={d.state.toLowerCase()} />
                    </td>
                    <td>{formatTime(d.createdOn)}</td>
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

function DiscussionView({ groupId, discussionId }: { groupId: string; discussionId: string }) {
  const { api } = useAuth();
  const discussion = useQuery({
    queryKey: ['group-discussion', groupId, discussionId],
    queryFn: () => api.groupDiscussion(groupId, discussionId),
  });
  if (discussion.error) return <ErrorMessage error={discussion.error} />;
  if (!discussion.data) return <Loading />;
  return (
    <>
      <p>
        <Link to={`${BASE}/groups/${groupId}`}>{t('groupDetail.backToTheGroup')}</Link>
      </p>
      {discussion.data.questions.map((question, index) => (
        <QuestionView key={question.input + String(index)} discussion={discussion.data} index={index} />
      ))}
      <Ask groupId={groupId} discussionId={discussionId} label={t('groupDetail.askAFollowUp')} />
    </>
  );
}

function QuestionView({ discussion, index }: { discussion: GroupDiscussion; index: number }) {
  const question = discussion.questions[index]!;
  const contributions = discussion.contributions.filter((c) => c.question === index);
  const phases = [...new Set(contributions.map((c) => c.phase))];
  return (
    <section className="panel" aria-label={t('groupDetail.question2', { number: index + 1 })}>
      <h2>{question.input}</h2>
      {question.synthesis !== undefined && (
        <div className="message success" data-testid="synthesis">
          <strong>{t('groupDetail.conclusion')}</strong> {question.synthesis}
        </div>
      )}
      {phases.map((phase) => (
        <section key={phase} aria-label={phase}>
          <h3>{phase}</h3>
          <ul className="steps">
            {contributions
              .filter((c) => c.phase === phase)
              .map((c) => (
                <li key={`${c.speaker.displayName} ${c.about ?? ''}`} data-status={c.status}>
                  <strong>
                    {c.speaker.displayName}
                    {c.about ? ` on ${c.about}` : ''}
                  </strong>{' '}
                  {c.status !== 'OK' && (
                    <Badge status={c.status === 'TIMEOUT' ? 'EXECUTION_INTERRUPTED' : 'ERROR'} label={c.status} />
                  )}{' '}
                  {c.text ?? c.error}
                  {c.conversationId && (
                    <>
                      {' '}
                      <Link to={`${BASE}/conversations/${c.conversationId}`}>{t('groupDetail.conversation')}</Link>
                    </>
                  )}
                </li>
              ))}
          </ul>
        </section>
      ))}
    </section>
  );
}
