import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Loopback fakes of the messaging platforms' APIs the channels reply through, checking what the real platforms
 * document: the Messenger Send API (`POST /me/messages?access_token=<page access token>`, `{recipient: {id},
 * messaging_type, message: {text, quick_replies}}`, at most 2000 characters, at most 13 quick replies of
 * `content_type: text` with a title of at most 20 characters and a payload of at most 1000) and Slack's
 * `chat.postMessage` (`Authorization: Bearer <bot token>`, a JSON body with `channel` and `text`, answered
 * `{ok: true}` or `{ok: false, error}` with HTTP 200). Also the signed webhook requests the platforms send.
 */

export interface SentMessage {
  readonly platform: 'facebook' | 'slack';
  readonly body: any;
}

export interface FakeChannelApis {
  readonly url: string;
  readonly facebookUrl: string;
  readonly slackUrl: string;
  /** Every well-formed message accepted, in order. */
  readonly sent: SentMessage[];
  /** Requests refused, with why. */
  readonly refused: string[];
  /** While true, requests are held without an answer (an instance stuck in sending, for takeover tests). */
  hold: boolean;
  /** Resolves once `count` messages were accepted. */
  waitForSent(count: number): Promise<void>;
  /** Resolves once a request is being held. */
  waitForHeld(): Promise<void>;
  close(): Promise<void>;
}

export function startFakeChannelApis(tokens: { pageAccessToken: string; botToken: string }): Promise<FakeChannelApis> {
  const sent: SentMessage[] = [];
  const refused: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const heldWaiters: (() => void)[] = [];
  const held: (() => void)[] = [];
  const accept = (message: SentMessage) => {
    sent.push(message);
    for (const waiter of waiters.filter((w) => sent.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (api.hold) {
        held.push(() => response.destroy());
        for (const waiter of heldWaiters.splice(0)) waiter();
        return;
      }
      const url = new URL(request.url ?? '/', 'http://fake');
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        refused.push(`${url.pathname}: body is not JSON`);
        return answer(400, { error: { message: 'body is not JSON' } });
      }
      if (request.method === 'POST' && url.pathname === '/facebook/me/messages') {
        const problem = messengerProblem(url, body, tokens.pageAccessToken);
        if (problem !== undefined) {
          refused.push(`facebook: ${problem}`);
          return answer(problem.startsWith('access token') ? 401 : 400, {
            error: { message: problem, type: 'OAuthException', code: 100 },
          });
        }
        accept({ platform: 'facebook', body });
        return answer(200, { recipient_id: body.recipient.id, message_id: `m_${sent.length}` });
      }
      if (request.method === 'POST' && url.pathname === '/slack/chat.postMessage') {
        if (request.headers.authorization !== `Bearer ${tokens.botToken}`) {
          refused.push('slack: invalid_auth');
          return answer(200, { ok: false, error: 'invalid_auth' });
        }
        if (!String(request.headers['content-type']).startsWith('application/json')) {
          refused.push('slack: not JSON');
          return answer(200, { ok: false, error: 'invalid_form_data' });
        }
        if (typeof body.channel !== 'string' || body.channel === '')
          return answer(200, { ok: false, error: 'channel_not_found' });
        if (typeof body.text !== 'string' || body.text === '') return answer(200, { ok: false, error: 'no_text' });
        const blocksProblem = body.blocks === undefined ? undefined : slackBlocksProblem(body.blocks);
        if (blocksProblem !== undefined) {
          refused.push(`slack: ${blocksProblem}`);
          return answer(200, { ok: false, error: 'invalid_blocks', errors: [blocksProblem] });
        }
        accept({ platform: 'slack', body });
        return answer(200, {
          ok: true,
          channel: body.channel,
          ts: `1700000000.${String(sent.length).padStart(6, '0')}`,
        });
      }
      refused.push(`unknown endpoint ${request.method} ${url.pathname}`);
      answer(404, { error: { message: 'unknown endpoint' } });
    });
  });

  const api: FakeChannelApis = {
    url: '',
    facebookUrl: '',
    slackUrl: '',
    sent,
    refused,
    hold: false,
    waitForSent: (count) =>
      sent.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    waitForHeld: () => (held.length > 0 ? Promise.resolve() : new Promise((resolve) => heldWaiters.push(resolve))),
    close: () =>
      new Promise((resolve) => {
        for (const release of held) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      Object.assign(api, { url, facebookUrl: `${url}/facebook`, slackUrl: `${url}/slack` });
      resolve(api);
    });
  });
}

function messengerProblem(url: URL, body: any, pageAccessToken: string): string | undefined {
  if (url.searchParams.get('access_token') !== pageAccessToken) return 'access token missing or invalid';
  if (typeof body?.recipient?.id !== 'string') return 'recipient.id is required';
  if (!['RESPONSE', 'UPDATE', 'MESSAGE_TAG'].includes(body.messaging_type)) return 'messaging_type is invalid';
  const message = body.message;
  if (typeof message?.text !== 'string' || message.text.length === 0 || message.text.length > 2000)
    return 'message.text must have 1 to 2000 characters';
  const extra = Object.keys(message).filter((key) => key !== 'text' && key !== 'quick_replies');
  if (extra.length > 0) return `unknown message fields ${extra.join(', ')}`;
  if (message.quick_replies !== undefined) {
    if (!Array.isArray(message.quick_replies) || message.quick_replies.length > 13) return 'at most 13 quick_replies';
    for (const quickReply of message.quick_replies) {
      if (quickReply.content_type !== 'text') return 'quick_replies[].content_type must be text';
      if (typeof quickReply.title !== 'string' || quickReply.title.length > 20) return 'quick reply title over 20';
      if (typeof quickReply.payload !== 'string' || quickReply.payload.length > 1000) return 'quick reply payload';
    }
  }
  return undefined;
}

/** Block Kit as `chat.postMessage` checks it, for the blocks replies use: sections of text, actions with buttons. */
function slackBlocksProblem(blocks: any): string | undefined {
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) return 'blocks must hold 1 to 50 blocks';
  const plainText = (value: any, max: number) =>
    value?.type === 'plain_text' && typeof value.text === 'string' && value.text.length > 0 && value.text.length <= max;
  for (const block of blocks) {
    if (block.type === 'section') {
      if (!plainText(block.text, 3000) && block.text?.type !== 'mrkdwn')
        return 'section text must have 1 to 3000 chars';
    } else if (block.type === 'actions') {
      const elements = block.elements;
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25)
        return 'actions hold 1 to 25 elements';
      const ids = new Set<string>();
      for (const element of elements) {
        if (element.type !== 'button') return `unknown element type ${element.type}`;
        if (!plainText(element.text, 75)) return 'button text must be plain_text of 1 to 75 chars';
        if (typeof element.value !== 'string' || element.value.length > 2000) return 'button value over 2000 chars';
        if (typeof element.action_id !== 'string' || ids.has(element.action_id)) return 'action_id missing or repeated';
        ids.add(element.action_id);
      }
    } else return `unknown block type ${block.type}`;
  }
  return undefined;
}

/** A Messenger webhook delivery of text messages (`[sender PSID, mid, text]`), and its signature headers. */
export function messengerDelivery(
  appSecret: string,
  messages: ReadonlyArray<{ sender: string; mid: string; text?: string; quickReply?: string }>,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    object: 'page',
    entry: [
      {
        id: 'PAGE_ID',
        time: 1_700_000_000_000,
        messaging: messages.map(({ sender, mid, text, quickReply }) => ({
          sender: { id: sender },
          recipient: { id: 'PAGE_ID' },
          timestamp: 1_700_000_000_000,
          message: { mid, text: text ?? quickReply, ...(quickReply ? { quick_reply: { payload: quickReply } } : {}) },
        })),
      },
    ],
  });
  const signature = createHmac('sha256', appSecret).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` } };
}

/** A Slack Events API request signed as Slack signs it (`v0:<timestamp>:<body>`, HMAC-SHA256). */
export function slackRequest(
  signingSecret: string,
  payload: unknown,
  timestamp = Math.floor(Date.now() / 1000),
): { body: string; headers: Record<string, string> } {
  return slackSigned(signingSecret, JSON.stringify(payload), 'application/json', timestamp);
}

/**
 * The interaction Slack sends when a person taps a button of the bot's reply `replyTs` in thread `threadTs`: a
 * form with a JSON `payload` of type `block_actions`, signed like every Slack request.
 */
export function slackButtonTap(
  signingSecret: string,
  options: { channel: string; user: string; replyTs: string; threadTs: string; value: string; actionTs: string },
): { body: string; headers: Record<string, string> } {
  const payload = {
    type: 'block_actions',
    user: { id: options.user, username: options.user.toLowerCase(), team_id: 'T0001' },
    api_app_id: 'A0001',
    team: { id: 'T0001' },
    container: { type: 'message', message_ts: options.replyTs, channel_id: options.channel, is_ephemeral: false },
    trigger_id: '1.2.3',
    channel: { id: options.channel, name: 'general' },
    message: { type: 'message', ts: options.replyTs, thread_ts: options.threadTs, text: 'reply', bot_id: 'B0001' },
    response_url: 'https://hooks.slack.com/actions/T0001/1/x',
    actions: [
      {
        type: 'button',
        action_id: 'quick_reply_0',
        block_id: 'quick_replies',
        text: { type: 'plain_text', text: options.value },
        value: options.value,
        action_ts: options.actionTs,
      },
    ],
  };
  return slackFormRequest(signingSecret, new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
}

/** A form-encoded request signed as Slack signs it (interactions arrive so). */
export function slackFormRequest(
  signingSecret: string,
  body: string,
): { body: string; headers: Record<string, string> } {
  return slackSigned(signingSecret, body, 'application/x-www-form-urlencoded', Math.floor(Date.now() / 1000));
}

function slackSigned(signingSecret: string, body: string, contentType: string, timestamp: number) {
  const signature = createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex');
  return {
    body,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': `v0=${signature}`,
    },
  };
}

/** An `event_callback` with a person's message in a channel (in a thread when `threadTs` is given). */
export function slackMessageEvent(options: {
  eventId: string;
  channel: string;
  user: string;
  ts: string;
  text: string;
  threadTs?: string;
}) {
  return {
    token: 'deprecated-verification-token',
    team_id: 'T0001',
    api_app_id: 'A0001',
    type: 'event_callback',
    event_id: options.eventId,
    event_time: 1_700_000_000,
    event: {
      type: 'message',
      channel: options.channel,
      user: options.user,
      text: options.text,
      ts: options.ts,
      channel_type: 'channel',
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    },
  };
}
