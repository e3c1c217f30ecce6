import type { ContextScope, Group, MemberRole, PhaseType } from '../resources/schemas/group.ts';

/**
 * How a group's style unfolds into phases (the original's flows, plus task force and negotiation): who speaks in
 * each, in which order, what they see of the discussion and what they are asked. CUSTOM groups give their phases.
 */

/** Who takes part in a phase: every member, the moderator, the members of a role, or every member without one. */
export type Participants = 'ALL' | 'MODERATOR' | MemberRole | 'NOT_DEVIL_ADVOCATE';

export interface PlannedPhase {
  readonly name: string;
  readonly type: PhaseType;
  readonly participants: Participants;
  readonly turnOrder: 'SEQUENTIAL' | 'PARALLEL';
  readonly contextScope: ContextScope;
  readonly targetEachPeer: boolean;
  readonly instruction: string;
}

const DEFAULT_INSTRUCTIONS: Readonly<Record<PhaseType, string>> = {
  OPINION: 'Give your answer to the question.',
  CRITIQUE: 'Review the answer above: what holds, what is wrong or missing.',
  REVISION: 'Revise your answer in the light of the feedback above.',
  CHALLENGE: 'Argue against the answers above: find their weaknesses and risks.',
  DEFENSE: 'Defend or amend your position against the challenges above.',
  ARGUE: 'Argue for your side of the question.',
  REBUTTAL: 'Counter the arguments of the other side above.',
  SYNTHESIS: 'As the moderator, synthesise the discussion above into one balanced conclusion.',
};

function phase(
  name: string,
  type: PhaseType,
  participants: Participants,
  turnOrder: PlannedPhase['turnOrder'],
  contextScope: ContextScope,
  options: { targetEachPeer?: boolean; instruction?: string } = {},
): PlannedPhase {
  return {
    name,
    type,
    participants,
    turnOrder,
    contextScope,
    targetEachPeer: options.targetEachPeer ?? false,
    instruction: options.instruction ?? DEFAULT_INSTRUCTIONS[type],
  };
}

const repeat = (times: number, make: (round: number) => PlannedPhase[]) =>
  Array.from({ length: times }, (_, i) => make(i + 1)).flat();

const synthesis = (name = 'Synthesis', instruction?: string, contextScope: ContextScope = 'FULL') =>
  phase(name, 'SYNTHESIS', 'MODERATOR', 'SEQUENTIAL', contextScope, instruction ? { instruction } : {});

export function planOf(group: Group): PlannedPhase[] {
  const rounds = group.maxRounds ?? 1;
  switch (group.style) {
    case 'ROUND_TABLE':
      return [...repeat(rounds, (r) => [phase(`Round ${r}`, 'OPINION', 'ALL', 'SEQUENTIAL', 'FULL')]), synthesis()];
    case 'PEER_REVIEW':
      return [
        phase('Opinions', 'OPINION', 'ALL', 'PARALLEL', 'NONE'),
        ...repeat(rounds, (r) => [
          phase(`Critique ${r}`, 'CRITIQUE', 'ALL', 'PARALLEL', 'LAST_PHASE', { targetEachPeer: true }),
          phase(`Revision ${r}`, 'REVISION', 'ALL', 'PARALLEL', 'OWN_FEEDBACK'),
        ]),
        synthesis(),
      ];
    case 'DEVIL_ADVOCATE':
      return [
        phase('Opinions', 'OPINION', 'NOT_DEVIL_ADVOCATE', 'PARALLEL', 'NONE'),
        ...repeat(rounds, (r) => [
          phase(`Challenge ${r}`, 'CHALLENGE', 'DEVIL_ADVOCATE', 'SEQUENTIAL', 'FULL'),
          phase(`Defense ${r}`, 'DEFENSE', 'NOT_DEVIL_ADVOCATE', 'PARALLEL', 'FULL'),
        ]),
        synthesis(),
      ];
    case 'DELPHI':
      return [
        ...repeat(Math.max(rounds, 2), (r) => [
          phase(`Round ${r}`, 'OPINION', 'ALL', 'PARALLEL', r === 1 ? 'NONE' : 'ANONYMOUS', {
            instruction:
              r === 1
                ? 'Give your own estimate or answer, independently.'
                : 'Here are the anonymous answers of the last round. Give your revised estimate or answer.',
          }),
        ]),
        synthesis(
          'Convergence',
          'As the moderator, state where the anonymous answers converge and where not.',
          'ANONYMOUS',
        ),
      ];
    case 'DEBATE':
      return [
        phase('Pro arguments', 'ARGUE', 'PRO', 'SEQUENTIAL', 'NONE', { instruction: 'Argue in favour.' }),
        phase('Con arguments', 'ARGUE', 'CON', 'SEQUENTIAL', 'FULL', { instruction: 'Argue against.' }),
        ...repeat(rounds, (r) => [
          phase(`Pro rebuttal ${r}`, 'REBUTTAL', 'PRO', 'SEQUENTIAL', 'FULL'),
          phase(`Con rebuttal ${r}`, 'REBUTTAL', 'CON', 'SEQUENTIAL', 'FULL'),
        ]),
        synthesis('Judgement', 'As the judge, weigh both sides above and give a verdict.'),
      ];
    case 'TASK_FORCE':
      return [
        ...repeat(rounds, (r) => [
          phase(`Contributions ${r}`, 'OPINION', 'ALL', 'SEQUENTIAL', 'FULL', {
            instruction: 'Contribute your part of the work from your expertise, building on the contributions above.',
          }),
        ]),
        synthesis('Integration', 'As the moderator, integrate the contributions above into one plan.'),
      ];
    case 'NEGOTIATION':
      return [
        phase('Opening positions', 'OPINION', 'ALL', 'PARALLEL', 'NONE', { instruction: 'State your position.' }),
        ...repeat(rounds, (r) => [
          phase(`Counter-proposals ${r}`, 'REVISION', 'ALL', 'SEQUENTIAL', 'FULL', {
            instruction: 'Make a counter-proposal that moves towards an agreement with the positions above.',
          }),
        ]),
        synthesis('Agreement', 'As the moderator, state the agreement reached above and what remains open.'),
      ];
    case 'CUSTOM':
      return (group.phases ?? []).map((custom) =>
        phase(
          custom.name,
          custom.type,
          custom.participants ?? 'ALL',
          custom.turnOrder ?? 'SEQUENTIAL',
          custom.contextScope ?? 'FULL',
          {
            targetEachPeer: custom.targetEachPeer ?? false,
            ...(custom.instruction ? { instruction: custom.instruction } : {}),
          },
        ),
      );
  }
}
