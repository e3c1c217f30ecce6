/** A message a messaging platform delivered to an agent's channel (`src/channels/channel-service.ts` owns the meaning). */
export const CHANNEL_MESSAGE_STATES = ['PENDING', 'PROCESSING', 'DONE', 'FAILED'] as const;
export type ChannelMessageState = (typeof CHANNEL_MESSAGE_STATES)[number];

export interface ChannelMessageRecord {
  readonly id: string;
  readonly platform: string;
  readonly agentId: string;
  /** The platform's id of the message (Messenger `mid`, Slack `event_id`); one record per platform, agent and id. */
  readonly messageKey: string;
  /** Who or where the message came from: one conversation per platform, agent and sender key. */
  readonly senderKey: string;
  /** The user id the conversation is started for. */
  readonly userId: string;
  /** JSON text: where the platform takes the reply (recipient, channel and thread). */
  readonly replyTo: string;
  readonly input: string;
  readonly receivedOn: number;
  readonly state: ChannelMessageState;
  /** While PROCESSING: when another instance may take the message over. */
  readonly leaseUntil?: number | undefined;
  readonly finishedOn?: number | undefined;
  readonly conversationId?: string | undefined;
  /** Why it failed. */
  readonly detail?: string | undefined;
}

export type ChannelMessageOutcome = Required<Pick<ChannelMessageRecord, 'finishedOn'>> & {
  readonly state: 'DONE' | 'FAILED';
} & Pick<ChannelMessageRecord, 'conversationId' | 'detail'>;

/** Inbound channel messages, persisted before the platform is answered, and the conversation of each sender. */
export interface ChannelMessageStore {
  /** Records a new PENDING message; false when the platform delivered the same message before (a retry). */
  accept(message: ChannelMessageRecord): Promise<boolean>;
  /**
   * Takes a message for processing until `leaseUntil`: it must be PENDING, or PROCESSING with its lease run out
   * (its instance died). `claimId` names this claim. Answers the message when this call took it.
   */
  claim(id: string, claimId: string, now: number, leaseUntil: number): Promise<ChannelMessageRecord | undefined>;
  /** Records the outcome, unless another claim took the message over meanwhile (answers false then). */
  finish(id: string, claimId: string, outcome: ChannelMessageOutcome): Promise<boolean>;
  /** Ids of messages that can be claimed: PENDING since before `pendingBefore`, or PROCESSING with a lease run out. */
  stranded(now: number, pendingBefore: number, limit: number): Promise<string[]>;
  /** The latest messages of an agent, newest first. */
  list(agentId: string, limit: number): Promise<ChannelMessageRecord[]>;
  conversationOf(platform: string, agentId: string, senderKey: string): Promise<string | undefined>;
  /** Sets (or replaces) the conversation of a sender. */
  setConversation(platform: string, agentId: string, senderKey: string, conversationId: string): Promise<void>;
}

export const CHANNEL_MESSAGE_COLUMNS =
  'id, platform, agent_id, message_key, sender_key, user_id, reply_to, input, received_on, state, lease_until, finished_on, conversation_id, detail';

const optionalNumber = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
const optionalText = (value: unknown) => (value === null || value === undefined ? undefined : String(value));

export function toChannelMessageRecord(row: Record<string, unknown>): ChannelMessageRecord {
  return {
    id: String(row.id),
    platform: String(row.platform),
    agentId: String(row.agent_id),
    messageKey: String(row.message_key),
    senderKey: String(row.sender_key),
    userId: String(row.user_id),
    replyTo: String(row.reply_to),
    input: String(row.input),
    receivedOn: Number(row.received_on),
    state: String(row.state) as ChannelMessageState,
    leaseUntil: optionalNumber(row.lease_until),
    finishedOn: optionalNumber(row.finished_on),
    conversationId: optionalText(row.conversation_id),
    detail: optionalText(row.detail),
  };
}

/** The row values of a record, in the order of `CHANNEL_MESSAGE_COLUMNS`. */
export function channelMessageRow(message: ChannelMessageRecord): (string | number | null)[] {
  return [
    message.id,
    message.platform,
    message.agentId,
    message.messageKey,
    message.senderKey,
    message.userId,
    message.replyTo,
    message.input,
    message.receivedOn,
    message.state,
    message.leaseUntil ?? null,
    message.finishedOn ?? null,
    message.conversationId ?? null,
    message.detail ?? null,
  ];
}
