import { invalid } from '../errors.ts';
import { isRecord } from '../shared/json.ts';

/**
 * The messaging platforms an agent's `channels[]` can name: how each one's webhook payload becomes messages, and
 * how replies go back through its API.
 */

/** A message as every platform gives it. */
export interface InboundMessage {
  /** The platform's id of the message: a delivery seen before is a retry. */
  readonly messageKey: string;
  /** One conversation per sender key (Messenger: the sender; Slack: the channel and thread). */
  readonly senderKey: string;
  readonly userId: string;
  /** Where the reply goes (platform-specific, kept as JSON). */
  readonly replyTo: Record<string, string>;
  readonly input: string;
}

export interface Reply {
  readonly texts: readonly string[];
  /** Values of the step's quick replies. */
  readonly quickReplies: readonly string[];
}

export interface PlatformApi {
  readonly fetch: typeof globalThis.fetch;
  readonly baseUrl: string;
}

export interface ChannelPlatform {
  readonly name: 'facebook' | 'slack';
  /** The channel type in an agent's `channels[]` (`svc://ai.svc.channel.<name>`; upstream `eddi://ai.labs.channel.<name>`). */
  readonly channelType: string;
  /** Settings the channel needs, each a vault reference. */
  readonly settings: readonly string[];
  send(
    reply: Reply,
    replyTo: Record<string, string>,
    config: Readonly<Record<string, string>>,
    api: PlatformApi,
  ): Promise<void>;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// ---------------------------------------------------------------------------------------------------------------
// Facebook Messenger
// ---------------------------------------------------------------------------------------------------------------

/** Messenger allows at most 13 quick replies of at most 20 characters each. */
const MAX_QUICK_REPLIES = 13;
const MAX_QUICK_REPLY_TITLE = 20;

/** The messages of a Messenger webhook delivery (`object: "page"`): texts, quick-reply taps and postbacks; echoes, deliveries and reads are left out. */
export function messengerMessages(body: unknown): InboundMessage[] {
  if (!isRecord(body) || body.object !== 'page' || !Array.isArray(body.entry))
    throw invalid('A Messenger webhook delivery is {"object": "page", "entry": [...]}.', { path: '$' });
  const messages: InboundMessage[] = [];
  for (const entry of body.entry) {
    const events = isRecord(entry) && Array.isArray(entry.messaging) ? entry.messaging : [];
    for (const event of events) {
      if (!isRecord(event) || !isRecord(event.sender) || text(event.sender.id) === undefined) continue;
      const senderId = text(event.sender.id)!;
      const from = { senderKey: senderId, userId: `facebook:${senderId}`, replyTo: { recipientId: senderId } };
      const { message, postback } = event;
      if (isRecord(message) && message.is_echo !== true && text(message.mid) !== undefined) {
        const input =
          (isRecord(message.quick_reply) ? text(message.quick_reply.payload) : undefined) ?? text(message.text);
        if (input !== undefined && input.trim() !== '')
          messages.push({ ...from, messageKey: text(message.mid)!, input });
      } else if (isRecord(postback) && text(postback.payload) !== undefined) {
        const key = text(postback.mid) ?? `postback:${senderId}:${String(event.timestamp)}`;
        messages.push({ ...from, messageKey: key, input: text(postback.payload)! });
      }
    }
  }
  return messages;
}

export const facebook: ChannelPlatform = {
  name: 'facebook',
  channelType: 'svc://ai.svc.channel.facebook',
  settings: ['appSecret', 'verificationToken', 'pageAccessToken'],
  async send(reply, replyTo, config, api) {
    const token = config.pageAccessToken!;
    const url = `${api.baseUrl}/me/messages?access_token=${encodeURIComponent(token)}`;
    for (const [index, replyText] of reply.texts.entries()) {
      const last = index === reply.texts.length - 1;
      const quickReplies = last
        ? reply.quickReplies.slice(0, MAX_QUICK_REPLIES).map((value) => ({
            content_type: 'text',
            title: value.slice(0, MAX_QUICK_REPLY_TITLE),
            payload: value,
          }))
        : [];
      const message = quickReplies.length > 0 ? { text: replyText, quick_replies: quickReplies } : { text: replyText };
      const answer = await api.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ recipient: { id: replyTo.recipientId }, messaging_type: 'RESPONSE', message }),
      });
      if (!answer.ok) {
        const error = (await answer.json().catch(() => undefined)) as { error?: { message?: unknown } } | undefined;
        const said = text(error?.error?.message)?.replaceAll(token, '<REDACTED>');
        throw new Error(`The Messenger Send API answered ${answer.status}${said ? `: ${said}` : ''}.`);
      }
    }
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Slack
// ---------------------------------------------------------------------------------------------------------------

export type SlackDelivery =
  | { readonly kind: 'url_verification'; readonly challenge: string }
  | { readonly kind: 'messages'; readonly messages: InboundMessage[] };

/**
 * A request to the Slack webhook: an Events API delivery (JSON) or an interaction (a form with a JSON `payload`,
 * sent when a person taps a button of a reply). Slack signs both the same way.
 */
export function slackDelivery(raw: string, contentType: string | undefined): SlackDelivery {
  if (contentType?.startsWith('application/x-www-form-urlencoded')) {
    const payload = new URLSearchParams(raw).get('payload');
    if (payload === null) throw invalid('A Slack interaction is a form with a payload field.', { path: '$.payload' });
    return { kind: 'messages', messages: slackInteraction(parsedJson(payload)) };
  }
  return slackEvent(parsedJson(raw));
}

export function parsedJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw invalid('The request body is not JSON.');
  }
}

/**
 * An Events API delivery: the `url_verification` handshake, or an `event_callback` whose `message` or
 * `app_mention` event from a person becomes a message (bots' own messages and edits are left out). A thread is one
 * conversation: a message outside a thread starts one, and the reply goes into it.
 */
function slackEvent(body: unknown): SlackDelivery {
  if (!isRecord(body) || text(body.type) === undefined)
    throw invalid('A Slack Events API delivery is a JSON object with a type.', { path: '$.type' });
  if (body.type === 'url_verification') {
    const challenge = text(body.challenge);
    if (challenge === undefined) throw invalid('url_verification carries a challenge.', { path: '$.challenge' });
    return { kind: 'url_verification', challenge };
  }
  const event = body.event;
  if (body.type !== 'event_callback' || !isRecord(event)) return { kind: 'messages', messages: [] };
  const [channel, ts, user, said] = [text(event.channel), text(event.ts), text(event.user), text(event.text)];
  const fromPerson = event.bot_id === undefined && event.subtype === undefined;
  if ((event.type !== 'message' && event.type !== 'app_mention') || !fromPerson || !channel || !ts || !user || !said)
    return { kind: 'messages', messages: [] };
  const input = said.replace(/<@[A-Z0-9]+>\s*/g, '').trim();
  if (input === '') return { kind: 'messages', messages: [] };
  const threadTs = text(event.thread_ts) ?? ts;
  return {
    kind: 'messages',
    messages: [
      {
        // A message's id in Slack is its channel and ts: the same message as message and app_mention is one.
        messageKey: `${channel}:${ts}`,
        senderKey: `${channel}:${threadTs}`,
        userId: `slack:${user}`,
        replyTo: { channel, threadTs },
        input,
      },
    ],
  };
}

/**
 * A `block_actions` interaction: each tapped quick-reply button of a reply becomes a message with the button's
 * value, in the conversation of the reply's thread. Other interactions carry no message.
 */
function slackInteraction(payload: unknown): InboundMessage[] {
  if (!isRecord(payload) || text(payload.type) === undefined)
    throw invalid('A Slack interaction payload is a JSON object with a type.', { path: '$.payload.type' });
  if (payload.type !== 'block_actions') return [];
  const { channel, user, message, actions } = payload;
  const channelId = isRecord(channel) ? text(channel.id) : undefined;
  const userId = isRecord(user) ? text(user.id) : undefined;
  const threadTs = isRecord(message) ? (text(message.thread_ts) ?? text(message.ts)) : undefined;
  if (!channelId || !userId || !threadTs || !Array.isArray(actions)) return [];
  return actions.flatMap((action) => {
    const [value, actionTs] = isRecord(action) ? [text(action.value), text(action.action_ts)] : [];
    if (value === undefined || value.trim() === '' || actionTs === undefined) return [];
    return [
      {
        messageKey: `${channelId}:action:${actionTs}`,
        senderKey: `${channelId}:${threadTs}`,
        userId: `slack:${userId}`,
        replyTo: { channel: channelId, threadTs },
        input: value,
      },
    ];
  });
}

/** Block Kit limits: 3,000 characters a section text, 25 elements an actions block, 75 characters a button label. */
const SLACK_SECTION_TEXT = 3000;
const SLACK_MAX_BUTTONS = 25;
const SLACK_BUTTON_LABEL = 75;
const SLACK_BUTTON_VALUE = 2000;

/** The reply text in sections, then the quick replies as buttons whose value comes back when tapped. */
function slackBlocks(replyText: string, quickReplies: readonly string[]): unknown[] {
  const sections: unknown[] = [];
  for (let start = 0; start < replyText.length; start += SLACK_SECTION_TEXT) {
    const part = replyText.slice(start, start + SLACK_SECTION_TEXT);
    sections.push({ type: 'section', text: { type: 'plain_text', text: part } });
  }
  const buttons = quickReplies
    .filter((value) => value.length <= SLACK_BUTTON_VALUE)
    .slice(0, SLACK_MAX_BUTTONS)
    .map((value, index) => ({
      type: 'button',
      action_id: `quick_reply_${index}`,
      text: { type: 'plain_text', text: value.slice(0, SLACK_BUTTON_LABEL) },
      value,
    }));
  return [...sections, { type: 'actions', block_id: 'quick_replies', elements: buttons }];
}

export const slack: ChannelPlatform = {
  name: 'slack',
  channelType: 'svc://ai.svc.channel.slack',
  settings: ['signingSecret', 'botToken'],
  async send(reply, replyTo, config, api) {
    for (const [index, replyText] of reply.texts.entries()) {
      const last = index === reply.texts.length - 1;
      const blocks = last && reply.quickReplies.length > 0 ? slackBlocks(replyText, reply.quickReplies) : undefined;
      const answer = await api.fetch(`${api.baseUrl}/chat.postMessage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${config.botToken}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ channel: replyTo.channel, text: replyText, thread_ts: replyTo.threadTs, blocks }),
      });
      const result = (await answer.json().catch(() => undefined)) as { ok?: unknown; error?: unknown } | undefined;
      if (!answer.ok || result?.ok !== true)
        throw new Error(`Slack chat.postMessage answered ${answer.status} ${text(result?.error) ?? 'without ok'}.`);
    }
  },
};

export const PLATFORMS = { facebook, slack } as const;
