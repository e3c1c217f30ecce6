import type { Group, MemberRole } from '../resources/schemas/group.ts';
import type { Participants, PlannedPhase } from './plan.ts';

/**
 * One discussion of a group: its questions, every contribution (who said what in which phase) and the synthesis
 * of each question. `runQuestion` walks the phases of the plan; `ask` makes one participant answer one message.
 */

export interface Speaker {
  /** Index in the group's members; absent for the moderator. */
  readonly member?: number;
  readonly agentId: string;
  readonly displayName: string;
  readonly role?: MemberRole | 'MODERATOR';
}

export interface Contribution {
  /** Index of the question (0: the first, then the follow-ups). */
  readonly question: number;
  readonly phase: string;
  readonly phaseType: PlannedPhase['type'];
  readonly speaker: Speaker;
  /** For a review of one peer: whose answer it reviews. */
  readonly about?: string;
  /** OK, or why there is no text: FAILED (the agent failed or is not deployed) or TIMEOUT. */
  readonly status: 'OK' | 'FAILED' | 'TIMEOUT';
  readonly text?: string;
  readonly error?: string;
  readonly conversationId?: string;
  readonly startedOn: number;
  readonly finishedOn: number;
}

export interface DiscussionQuestion {
  readonly input: string;
  synthesis?: string;
}

export interface Participant extends Speaker {
  /** The participant's conversation with its agent, kept for the whole discussion (follow-ups continue it). */
  conversationId?: string;
  /** Left out of the rest of a question after it failed or timed out. */
  absent?: boolean;
}

export interface Discussion {
  readonly id: string;
  readonly groupId: string;
  readonly groupVersion: number;
  readonly style: Group['style'];
  state: 'RUNNING' | 'DONE';
  readonly createdOn: number;
  lastModifiedOn: number;
  readonly questions: DiscussionQuestion[];
  readonly participants: Participant[];
  readonly moderator: Participant;
  readonly contributions: Contribution[];
}

/** Answers one message as one participant; rejects (or resolves FAILED/TIMEOUT) when it cannot. */
export type Ask = (
  participant: Participant,
  message: string,
) => Promise<Pick<Contribution, 'status' | 'text' | 'error' | 'conversationId' | 'startedOn' | 'finishedOn'>>;

export interface DiscussionEvents {
  phase?(phase: PlannedPhase): void;
  contribution?(contribution: Contribution): void;
}

/** Members in speaking order (ascending; list order among equals), each a participant. */
export function participantsOf(group: Group): Participant[] {
  return group.members
    .map((member, index) => ({ member, index }))
    .sort((a, b) => (a.member.speakingOrder ?? a.index) - (b.member.speakingOrder ?? b.index) || a.index - b.index)
    .map(({ member, index }) => ({
      member: index,
      agentId: member.agentId,
      displayName: member.displayName,
      ...(member.role ? { role: member.role } : {}),
    }));
}

function selected(discussion: Discussion, participants: Participants): Participant[] {
  if (participants === 'MODERATOR') return discussion.moderator.absent ? [] : [discussion.moderator];
  return discussion.participants.filter(
    (p) =>
      !p.absent &&
      (participants === 'ALL' ||
        (participants === 'NOT_DEVIL_ADVOCATE' ? p.role !== 'DEVIL_ADVOCATE' : p.role === participants)),
  );
}

const said = (c: Contribution, name: string) => `- ${name}: ${c.text}`;

/** What a participant sees of the discussion so far, by the phase's context scope. */
function contextFor(
  discussion: Discussion,
  question: number,
  phase: PlannedPhase,
  participant: Participant,
  previousPhase: string | undefined,
): string[] {
  const answered = discussion.contributions.filter((c) => c.question === question && c.status === 'OK');
  switch (phase.contextScope) {
    case 'NONE':
      return [];
    case 'FULL':
      return answered.map((c) => said(c, c.about ? `${c.speaker.displayName} on ${c.about}` : c.speaker.displayName));
    case 'LAST_PHASE':
      return answered.filter((c) => c.phase === previousPhase).map((c) => said(c, c.speaker.displayName));
    case 'ANONYMOUS':
      return answered.filter((c) => c.phase === previousPhase).map((c, i) => said(c, `Participant ${i + 1}`));
    case 'OWN_FEEDBACK':
      return answered
        .filter((c) => c.phaseType === 'CRITIQUE' && c.about === participant.displayName)
        .map((c) => said(c, c.speaker.displayName));
  }
}

function messageFor(
  discussion: Discussion,
  question: number,
  phase: PlannedPhase,
  participant: Participant,
  context: string[],
  about?: Contribution,
): string {
  const earlier = discussion.questions
    .slice(0, question)
    .map((q) => `- ${q.input}${q.synthesis ? ` (concluded: ${q.synthesis})` : ''}`);
  return [
    `You are ${participant.displayName} in a group discussion (${phase.name}).`,
    ...(earlier.length > 0 ? ['Earlier questions:', ...earlier] : []),
    `Question: ${discussion.questions[question]!.input}`,
    ...(context.length > 0 ? ['What was said:', ...context] : []),
    ...(about ? [`The answer of ${about.speaker.displayName}: ${about.text}`] : []),
    phase.instruction,
  ].join('\n');
}

/** Runs the phases for one question; the moderator's synthesis becomes the question's. */
export async function runQuestion(
  discussion: Discussion,
  question: number,
  plan: readonly PlannedPhase[],
  ask: Ask,
  events: DiscussionEvents = {},
): Promise<void> {
  for (const p of [...discussion.participants, discussion.moderator]) delete p.absent;
  let previousPhase: string | undefined;
  for (const phase of plan) {
    const speakers = selected(discussion, phase.participants);
    if (speakers.length === 0) continue;
    events.phase?.(phase);
    const lastAnswers = discussion.contributions.filter(
      (c) => c.question === question && c.phase === previousPhase && c.status === 'OK',
    );
    interface Turn {
      readonly speaker: Participant;
      readonly about: Contribution | undefined;
    }
    const turns = speakers.flatMap((speaker): Turn[] =>
      phase.targetEachPeer
        ? lastAnswers.filter((c) => c.speaker.displayName !== speaker.displayName).map((about) => ({ speaker, about }))
        : [{ speaker, about: undefined }],
    );
    const fixedContext = (speaker: Participant) => contextFor(discussion, question, phase, speaker, previousPhase);
    const contextAtStart = new Map(turns.map(({ speaker }) => [speaker, fixedContext(speaker)] as const));
    const answer = async ({ speaker, about }: Turn): Promise<Contribution> => {
      const context = phase.turnOrder === 'PARALLEL' ? contextAtStart.get(speaker)! : fixedContext(speaker);
      const answered = await ask(
        speaker,
        messageFor(discussion, question, phase, speaker, about ? [] : context, about),
      );
      const { conversationId: _, absent: __, ...who } = speaker;
      const contribution: Contribution = {
        question,
        phase: phase.name,
        phaseType: phase.type,
        speaker: who,
        ...(about ? { about: about.speaker.displayName } : {}),
        ...answered,
      };
      events.contribution?.(contribution);
      return contribution;
    };
    const record = (contribution: Contribution, speaker: Participant) => {
      discussion.contributions.push(contribution);
      if (contribution.status !== 'OK') speaker.absent = true;
    };
    if (phase.turnOrder === 'PARALLEL') {
      // Answers stream as they come; the transcript keeps them in speaking order.
      const answers = await Promise.all(turns.map(answer));
      for (const [i, contribution] of answers.entries()) record(contribution, turns[i]!.speaker);
    } else {
      for (const turn of turns) if (!turn.speaker.absent) record(await answer(turn), turn.speaker);
    }
    if (phase.type === 'SYNTHESIS') {
      const synthesis = discussion.contributions.findLast(
        (c) => c.question === question && c.phase === phase.name && c.status === 'OK',
      );
      if (synthesis?.text !== undefined) discussion.questions[question]!.synthesis = synthesis.text;
    }
    previousPhase = phase.name;
  }
}
