import type { RecordedDecision } from '../resources/schemas/transcript.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import type { Conversation } from '../runtime/memory.ts';
import type { TurnReplay } from '../runtime/replay.ts';
import type { FieldResult } from './check-step.ts';

/**
 * Human in the loop in a replay: a replayed turn that waits for a person gets the decision its step recorded, as
 * the actor `transcript-run`, each time it waits (up to `MAX_DECISIONS`). A turn still waiting after that (the step
 * recorded no decision, or it keeps waiting) ends the conversation, so no replay is left in the inbox. Tool calls
 * wait for no one while LLM answers come from the recording: the recorded answer stands for the whole tool loop.
 */

const MAX_DECISIONS = 10;
const REPLAY_ACTOR = 'transcript-run';

/** How the replayed turn waited for a person, beside what its step recorded. */
export interface Waiting {
  readonly recorded: RecordedDecision | undefined;
  /** The replayed turn should wait as the recorded one did (not so for tool approvals under recorded LLM answers). */
  readonly waitExpected: boolean;
  /** How often the replayed turn waited and got the recorded decision. */
  readonly decided: number;
  /** It still waited when the replay gave up (the conversation was ended). */
  readonly undecided: boolean;
}

/**
 * Decides the replayed turn as recorded while it waits (the resumed turn's calls answered from the step's recordings
 * like the turn's before it waited); answers the conversation after that, and how it waited.
 */
export async function decideAsRecorded(
  conversations: ConversationService,
  replayed: Conversation,
  step: {
    readonly decision?: RecordedDecision | undefined;
    readonly calls: TurnReplay | undefined;
    readonly llmRecorded: boolean;
  },
): Promise<{ conversation: Conversation; waiting: Waiting }> {
  const recorded = step.decision;
  const waitExpected = recorded !== undefined && !(recorded.pauseType === 'tool-approval' && step.llmRecorded);
  let conversation = replayed;
  let decided = 0;
  try {
    while (conversation.state === 'AWAITING_HUMAN' && recorded && decided < MAX_DECISIONS) {
      conversation = await conversations.resume(
        conversation.id,
        { ...recorded, actor: REPLAY_ACTOR },
        undefined,
        async () => true,
        step.calls,
      );
      decided++;
    }
  } catch (error) {
    // The step fails with this error; the turn must not stay waiting for a person who will never come.
    await conversations.end(conversation.id);
    throw error;
  }
  const undecided = conversation.state === 'AWAITING_HUMAN';
  if (undecided) conversation = await conversations.end(conversation.id);
  return { conversation, waiting: { recorded, waitExpected, decided, undecided } };
}

/** The step's `decision` field: whether the replayed turn waited for a person as the recorded one did. */
export function decisionField({ recorded, waitExpected, decided, undecided }: Waiting): FieldResult | undefined {
  if (!undecided && decided === 0 && !waitExpected) return undefined;
  const field = { field: 'decision', compare: 'exact', ...(recorded ? { expected: recorded.action } : {}) };
  if (undecided)
    return {
      ...field,
      passed: false,
      actual: 'AWAITING_HUMAN',
      diff: recorded
        ? `the turn still waited for a person after ${MAX_DECISIONS} decisions (${recorded.action}); the replay ended the conversation`
        : 'the turn waited for a person, and the transcript records no decision for this step; the replay ended the conversation',
    };
  if (decided === 0)
    return {
      ...field,
      passed: false,
      diff: `the recorded turn waited for a person (decided ${recorded!.action}); the replayed turn did not wait`,
    };
  return { ...field, passed: true, actual: recorded!.action };
}
