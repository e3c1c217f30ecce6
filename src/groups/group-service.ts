import type { FastifyBaseLogger } from 'fastify';
import { conflict, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Group } from '../resources/schemas/group.ts';
import type { ResourceService } from '../resources/service.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import { normalizeEnvironment } from '../runtime/deployments.ts';
import type { ContextValue } from '../runtime/memory.ts';
import { TURN_ERROR_KEY } from '../runtime/pipeline.ts';
import { outputTexts } from '../runtime/snapshot.ts';
import type { CallerAccess } from '../security/access.ts';
import type { GroupDiscussionRecord, GroupDiscussionStore } from '../storage/group-discussion-ports.ts';
import {
  participantsOf,
  runQuestion,
  type Ask,
  type Discussion,
  type DiscussionEvents,
  type Participant,
} from './discussion.ts';
import { planOf } from './plan.ts';

/**
 * Group conversations (issue 18): a discussion asks the members of a group, phase by phase, through their own
 * conversations on the ordinary conversation path (each agent answers through its normal pipeline), and the
 * moderator synthesises. The transcript is stored after every phase; a follow-up question continues the same
 * conversations. A member that fails or does not answer within the group's timeout is reported in the transcript
 * and left out of the rest of the question. Starting or continuing a discussion needs USE on the group and on
 * every agent in it.
 */

const DEFAULT_TIMEOUT_SECONDS = 60;
const MAX_LISTED = 100;

export interface GroupServiceOptions {
  readonly resources: ResourceService;
  readonly conversations: ConversationService;
  readonly store: GroupDiscussionStore;
  readonly log: FastifyBaseLogger;
  readonly clock?: () => number;
}

export interface Question {
  readonly input: string;
  readonly context?: Readonly<Record<string, ContextValue>>;
}

/** A stored discussion in a list: no contributions. */
export interface DiscussionSummary {
  readonly id: string;
  readonly groupId: string;
  readonly state: string;
  readonly createdOn: number;
  readonly lastModifiedOn: number;
  readonly questions: Discussion['questions'];
}

export class GroupService {
  readonly #options: GroupServiceOptions;
  readonly #clock: () => number;

  constructor(options: GroupServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Runs a new discussion of the group's current version. */
  async start(
    groupId: string,
    question: Question,
    caller?: CallerAccess,
    events?: DiscussionEvents,
  ): Promise<Discussion> {
    const { version, group } = await this.#usableGroup(groupId, caller);
    const now = this.#clock();
    const discussion: Discussion = {
      id: newId(now),
      groupId,
      groupVersion: version,
      style: group.style,
      state: 'RUNNING',
      createdOn: now,
      lastModifiedOn: now,
      questions: [],
      participants: participantsOf(group),
      moderator: { agentId: group.moderatorAgentId, displayName: 'Moderator', role: 'MODERATOR' },
      contributions: [],
    };
    await this.#options.store.create(this.#record(discussion, group));
    return this.#discuss(discussion, group, question, events);
  }

  /** Asks a follow-up question in a discussion: the members continue their conversations. 409 while it runs. */
  async followUp(
    groupId: string,
    discussionId: string,
    question: Question,
    caller?: CallerAccess,
    events?: DiscussionEvents,
  ): Promise<Discussion> {
    const discussion = await this.get(groupId, discussionId, caller);
    const { group } = await this.#usableGroup(groupId, caller, discussion.groupVersion);
    const now = this.#clock();
    if (!(await this.#options.store.claim(groupId, discussionId, now, now + leaseMillis(group))))
      throw conflict(`Discussion ${discussionId} is answering a question; ask again when it is done.`);
    discussion.state = 'RUNNING';
    return this.#discuss(discussion, group, question, events);
  }

  async get(groupId: string, discussionId: string, caller?: CallerAccess): Promise<Discussion> {
    await this.#options.resources.currentVersion('group', groupId, caller);
    const record = await this.#options.store.get(groupId, discussionId);
    if (record === undefined) throw notFound(`No discussion ${discussionId} in group ${groupId}.`);
    return JSON.parse(record.bodyJson) as Discussion;
  }

  async list(groupId: string, caller?: CallerAccess): Promise<DiscussionSummary[]> {
    await this.#options.resources.currentVersion('group', groupId, caller);
    return (await this.#options.store.list(groupId, MAX_LISTED)).map((record) => {
      const { id, state, createdOn, lastModifiedOn, questions } = JSON.parse(record.bodyJson) as Discussion;
      return { id, groupId, state, createdOn, lastModifiedOn, questions };
    });
  }

  /** Deletes the transcript (EDIT on the group); the members' conversations stay. */
  async delete(groupId: string, discussionId: string, caller?: CallerAccess): Promise<void> {
    await this.#options.resources.currentVersion('group', groupId, caller);
    await this.#options.resources.authorize(groupId, caller, 'EDIT', 'group');
    if (!(await this.#options.store.delete(groupId, discussionId)))
      throw notFound(`No discussion ${discussionId} in group ${groupId}.`);
  }

  /** The group (a version, or the current one) after checking USE on it and on every agent it names. */
  async #usableGroup(groupId: string, caller: CallerAccess | undefined, version?: number) {
    const { resources } = this.#options;
    const at = version ?? (await resources.currentVersion('group', groupId, caller));
    const group = JSON.parse(await resources.read('group', groupId, at, caller)) as Group;
    for (const agentId of new Set([...group.members.map((m) => m.agentId), group.moderatorAgentId]))
      await resources.authorize(agentId, caller, 'USE', 'agent');
    return { version: at, group };
  }

  async #discuss(discussion: Discussion, group: Group, question: Question, events: DiscussionEvents = {}) {
    const index = discussion.questions.push({ input: question.input }) - 1;
    const ask = this.#asker(group, question.context ?? {}, `group-${discussion.id}`, discussion.groupId);
    // Saves run one after the other, so that an earlier transcript never overwrites a later one.
    let saved = Promise.resolve();
    const save = () => {
      discussion.lastModifiedOn = this.#clock();
      const record = this.#record(discussion, group);
      saved = saved.catch(() => undefined).then(() => this.#options.store.update(record));
      return saved;
    };
    try {
      await runQuestion(discussion, index, planOf(group), ask, {
        phase: (phase) => {
          void save().catch(() => undefined);
          events.phase?.(phase);
        },
        contribution: events.contribution,
      });
    } finally {
      discussion.state = 'DONE';
      await save();
    }
    return discussion;
  }

  /** One participant answering one message through its own conversation, within the group's timeout. */
  #asker(group: Group, context: Readonly<Record<string, ContextValue>>, userId: string, groupId: string): Ask {
    const { conversations } = this.#options;
    const environment = normalizeEnvironment(group.environment);
    const timeoutMillis = (group.protocol?.agentTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    return async (participant: Participant, message: string) => {
      const startedOn = this.#clock();
      const answer = async () => {
        participant.conversationId ??= (
          await conversations.start(participant.agentId, environment, { userId, context: {} })
        ).id;
        const conversation = await conversations.say(participant.conversationId, { input: message, context, groupId });
        const step = conversation.steps.at(-1);
        if (conversation.state === 'ERROR')
          return {
            status: 'FAILED' as const,
            error: JSON.stringify(step?.output[TURN_ERROR_KEY] ?? 'The turn ended in ERROR.'),
          };
        return { status: 'OK' as const, text: outputTexts(step?.output.output).join('\n') };
      };
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<{ status: 'TIMEOUT'; error: string }>((resolve) => {
        timer = setTimeout(
          () => resolve({ status: 'TIMEOUT', error: `No answer within ${timeoutMillis / 1000} s.` }),
          timeoutMillis,
        );
      });
      const result = await Promise.race([
        answer().catch((error: Error) => ({ status: 'FAILED' as const, error: error.message })),
        timedOut,
      ]).finally(() => clearTimeout(timer));
      if (result.status !== 'OK')
        this.#options.log.warn({ agentId: participant.agentId, status: result.status }, 'group member did not answer');
      return {
        ...result,
        ...(participant.conversationId ? { conversationId: participant.conversationId } : {}),
        startedOn,
        finishedOn: this.#clock(),
      };
    };
  }

  #record(discussion: Discussion, group: Group): GroupDiscussionRecord {
    return {
      id: discussion.id,
      groupId: discussion.groupId,
      createdOn: discussion.createdOn,
      lastModifiedOn: discussion.lastModifiedOn,
      state: discussion.state,
      leaseUntil: discussion.state === 'RUNNING' ? this.#clock() + leaseMillis(group) : undefined,
      bodyJson: JSON.stringify(discussion),
    };
  }
}

/** How long a question may take at most: every phase waiting for every participant in turn. */
function leaseMillis(group: Group): number {
  const turns = planOf(group).length * (group.members.length + 1);
  return turns * (group.protocol?.agentTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
}
