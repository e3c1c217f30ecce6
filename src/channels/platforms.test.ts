import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messengerMessages, slackDelivery } from './platforms.ts';

const slackEvent = (body: unknown) => slackDelivery(JSON.stringify(body), 'application/json');

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
    assert.deepEqual(slackEvent({ type: 'url_verification', challenge: 'c1' }), {
      kind: 'url_verification',
      challenge: 'c1',
    });
    const callback = (event: Record<string, unknown>) => ({
      type: 'event_callback',
      event_id: 'Ev',
      event: { channel: 'C1', user: 'U1', ts: '1.1', ...event },
    });
    const mention = slackEvent(callback({ type: 'app_mention', text: '<@U0BOT> what is new?', thread_ts: '0.9' }));
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
    assert.deepEqual(slackEvent(callback({ type: 'message', text: 'hi', bot_id: 'B1' })), none);
    assert.deepEqual(slackEvent(callback({ type: 'message', text: 'hi', subtype: 'message_changed' })), none);
    assert.deepEqual(slackEvent(callback({ type: 'reaction_added', text: 'hi' })), none);
    assert.deepEqual(slackEvent(callback({ type: 'app_mention', text: '<@U0BOT>' })), none);
    assert.deepEqual(slackEvent({ type: 'app_rate_limited' }), none);
    assert.throws(() => slackEvent({ challenge: 'x' }), /with a type/);
    assert.throws(() => slackEvent({ type: 'url_verification' }), /challenge/);
  });

  it('Slack: a tapped quick-reply button is a message in the thread of the reply it belongs to', () => {
    const interaction = (payload: unknown) =>
      slackDelivery(`payload=${encodeURIComponent(JSON.stringify(payload))}`, 'application/x-www-form-urlencoded');
    const tap = {
      type: 'block_actions',
      user: { id: 'U1', username: 'ada' },
      channel: { id: 'C1', name: 'general' },
      container: { type: 'message', message_ts: '2.2', channel_id: 'C1' },
      message: { type: 'message', ts: '2.2', thread_ts: '1.1', text: 'Got it.' },
      actions: [
        { type: 'button', action_id: 'quick_reply_0', block_id: 'quick_replies', value: 'Yes', action_ts: '3.3' },
      ],
    };
    assert.deepEqual(interaction(tap), {
      kind: 'messages',
      messages: [
        {
          messageKey: 'C1:action:3.3',
          senderKey: 'C1:1.1',
          userId: 'slack:U1',
          replyTo: { channel: 'C1', threadTs: '1.1' },
          input: 'Yes',
        },
      ],
    });
    const none = { kind: 'messages', messages: [] };
    assert.deepEqual(interaction({ ...tap, type: 'view_submission' }), none);
    assert.deepEqual(interaction({ ...tap, actions: [{ type: 'static_select', action_ts: '3.4' }] }), none);
    assert.throws(() => slackDelivery('nothing=1', 'application/x-www-form-urlencoded'), /payload/);
    assert.throws(() => slackDelivery('payload=%7Bnot', 'application/x-www-form-urlencoded'), /not JSON/);
    assert.throws(() => interaction([]), /with a type/);
  });
});
