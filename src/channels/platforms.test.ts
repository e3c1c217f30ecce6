import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messengerMessages, slackDelivery } from './platforms.ts';

describe('channel payloads', () => {
  it('Messenger: texts, quick-reply taps and postbacks become messages; echoes, deliveries and reads do not', () => {
    const event = (fields: Record<string, unknown>) => ({
      sender: { id: 'PSID' },
      recipient: { id: 'PAGE' },
      ...fields,
    });
    const messages = messengerMessages({
      object: 'page',
      entry: [
        {
          messaging: [
            event({ message: { mid: 'm1', text: 'hello' } }),
            event({ message: { mid: 'm2', text: 'Yes please', quick_reply: { payload: 'YES' } } }),
            event({ message: { mid: 'm3', text: 'sent by the page', is_echo: true } }),
            event({ message: { mid: 'm4', attachments: [{ type: 'image' }] } }),
            event({ delivery: { mids: ['m1'], watermark: 1 } }),
            event({ read: { watermark: 1 } }),
            event({ timestamp: 42, postback: { title: 'Start', payload: 'GET_STARTED' } }),
            { message: { mid: 'm5', text: 'no sender' } },
          ],
        },
      ],
    });
    assert.deepEqual(
      messages.map((m) => [m.messageKey, m.input, m.senderKey, m.userId, m.replyTo.recipientId]),
      [
        ['m1', 'hello', 'PSID', 'facebook:PSID', 'PSID'],
        ['m2', 'YES', 'PSID', 'facebook:PSID', 'PSID'],
        ['postback:PSID:42', 'GET_STARTED', 'PSID', 'facebook:PSID', 'PSID'],
      ],
    );
    assert.throws(() => messengerMessages({ object: 'instagram', entry: [] }), /"object": "page"/);
    assert.throws(() => messengerMessages([]), /"object": "page"/);
  });

  it("Slack: url_verification, a person's message or mention (the mention taken out), threads; bots and edits are left out", () => {
    assert.deepEqual(slackDelivery({ type: 'url_verification', challenge: 'c1' }), {
      kind: 'url_verification',
      challenge: 'c1',
    });
    const callback = (event: Record<string, unknown>) => ({
      type: 'event_callback',
      event_id: 'Ev',
      event: { channel: 'C1', user: 'U1', ts: '1.1', ...event },
    });
    const mention = slackDelivery(callback({ type: 'app_mention', text: '<@U0BOT> what is new?', thread_ts: '0.9' }));
    assert.deepEqual(mention, {
      kind: 'messages',
      messages: [
        {
          messageKey: 'C1:1.1',
          senderKey: 'C1:0.9',
          userId: 'slack:U1',
          replyTo: { channel: 'C1', threadTs: '0.9' },
          input: 'what is new?',
        },
      ],
    });
    const none = { kind: 'messages', messages: [] };
    assert.deepEqual(slackDelivery(callback({ type: 'message', text: 'hi', bot_id: 'B1' })), none);
    assert.deepEqual(slackDelivery(callback({ type: 'message', text: 'hi', subtype: 'message_changed' })), none);
    assert.deepEqual(slackDelivery(callback({ type: 'reaction_added', text: 'hi' })), none);
    assert.deepEqual(slackDelivery(callback({ type: 'app_mention', text: '<@U0BOT>' })), none);
    assert.deepEqual(slackDelivery({ type: 'app_rate_limited' }), none);
    assert.throws(() => slackDelivery({ challenge: 'x' }), /with a type/);
    assert.throws(() => slackDelivery({ type: 'url_verification' }), /challenge/);
  });
});
