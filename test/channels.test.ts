import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createResource, deployAgent } from './support/agents.ts';
import {
  messengerDelivery,
  slackButtonTap,
  slackFormRequest,
  slackMessageEvent,
  slackRequest,
  startFakeChannelApis,
  type FakeChannelApis,
} from './support/fake-channels.ts';
import { call } from './support/http.ts';
import { serverOfBlock, storeTypes } from './support/server.ts';
import { onEveryMessage } from './support/agents.ts';

/**
 * Messaging channels (issue 18): an agent's Messenger and Slack channels answer the platforms' webhooks (signatures
 * checked), persist each message before acknowledging it, keep one conversation per sender (Slack: per thread) and
 * reply through loopback fakes of the Send API and chat.postMessage that check what the platforms document.
 */

const SECRETS = {
  FB_APP_SECRET: 'fb-app-secret-value-1234',
  FB_VERIFY: 'fb-verify-token-value-5678',
  FB_PAGE_TOKEN: 'fb-page-access-token-9012',
  SLACK_SIGNING: 'slack-signing-secret-3456',
  SLACK_BOT: 'xoxb-slack-bot-token-7890',
};

const channels = [
  {
    type: 'eddi://ai.labs.channel.facebook',
    config: {
      appSecret: '${vault:FB_APP_SECRET}',
      verificationToken: '${vault:FB_VERIFY}',
      pageAccessToken: '${vault:FB_PAGE_TOKEN}',
    },
  },
  {
    type: 'svc://ai.svc.channel.slack',
    config: { signingSecret: '${vault:SLACK_SIGNING}', botToken: '${vault:SLACK_BOT}' },
  },
];

const outputs = {
  outputSet: [
    {
      action: 'CONVERSATION_START',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome!' }] }],
    },
    {
      action: 'reply',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Got it.' }] }],
      quickReplies: [
        { value: 'Yes', expressions: 'confirm(yes)' },
        { value: 'No, thank you very much', expressions: 'confirm(no)' },
      ],
    },
  ],
};

/** The Block Kit blocks of a reply with the output set's quick replies as buttons. */
function quickReplyBlocks(text: string) {
  const button = (value: string, index: number) => ({
    type: 'button',
    action_id: `quick_reply_${index}`,
    text: { type: 'plain_text', text: value },
    value,
  });
  return [
    { type: 'section', text: { type: 'plain_text', text } },
    { type: 'actions', block_id: 'quick_replies', elements: [button('Yes', 0), button('No, thank you very much', 1)] },
  ];
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let tries = 0; ; tries++) {
    const value = await read();
    if (done(value) || tries > 500) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const store of storeTypes) {
  describe(`messaging channels (${store})`, () => {
    let fake: FakeChannelApis;
    let agentId = '';
    const block = serverOfBlock(store, {
      'svc.vault.master-key': 'channels-test-master-key-0123456789',
      'svc.channels.facebook.api-url': 'http://127.0.0.1:9/unused',
    });
    const { api } = block;
    const url = () => block.server.url;
    const messages = async () => (await api.get(`/channels/${agentId}/messages`)).json;
    const settled = () =>
      until(messages, (list) => list.every((m: { state: string }) => m.state === 'DONE' || m.state === 'FAILED'));

    before(async () => {
      fake = await startFakeChannelApis({ pageAccessToken: SECRETS.FB_PAGE_TOKEN, botToken: SECRETS.SLACK_BOT });
      await block.server.restart({
        'svc.channels.facebook.api-url': fake.facebookUrl,
        'svc.channels.slack.api-url': fake.slackUrl,
      });
      for (const [name, value] of Object.entries(SECRETS)) {
        const stored = await api.put(`/secretstore/secrets/default/${name}`, { json: { value } });
        assert.ok(stored.status < 300, stored.text);
      }
      const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
      agentId = await deployAgent(api, {
        extensions: [{ type: 'svc://ai.svc.behavior', config: { uri: rules } }],
        outputSet: outputs,
        agent: { channels },
      });
    });
    after(() => fake?.close());

    it('Messenger verification handshake: the challenge comes back only for the right verify token', async () => {
      const verify = (query: string, id = agentId) => call(url(), 'GET', `/channels/facebook/${id}?${query}`);
      const ok = await verify(`hub.mode=subscribe&hub.verify_token=${SECRETS.FB_VERIFY}&hub.challenge=1158201444`);
      assert.equal(ok.status, 200);
      assert.equal(ok.text, '1158201444');
      assert.equal((await verify('hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1')).status, 403);
      assert.equal((await verify('hub.mode=subscribe&hub.challenge=1')).status, 403);
      assert.equal((await verify(`hub.verify_token=${SECRETS.FB_VERIFY}&hub.challenge=1`)).status, 400);
      assert.equal(
        (await verify(`hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`, '0123456789abcdef01234567')).status,
        404,
      );
    });

    it('a signed Messenger message is acknowledged, answered through the Send API with quick replies, one conversation per sender', async () => {
      const first = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-1', mid: 'm.1', text: 'hello' }]);
      const acknowledged = await call(url(), 'POST', `/channels/facebook/${agentId}`, first);
      assert.equal(acknowledged.status, 200, acknowledged.text);
      assert.equal(acknowledged.text, 'EVENT_RECEIVED');
      await fake.waitForSent(2);
      assert.deepEqual(
        fake.sent.map((m) => m.body),
        [
          { recipient: { id: 'PSID-1' }, messaging_type: 'RESPONSE', message: { text: 'Welcome!' } },
          {
            recipient: { id: 'PSID-1' },
            messaging_type: 'RESPONSE',
            message: {
              text: 'Got it.',
              quick_replies: [
                { content_type: 'text', title: 'Yes', payload: 'Yes' },
                { content_type: 'text', title: 'No, thank you very m', payload: 'No, thank you very much' },
              ],
            },
          },
        ],
      );

      const tapped = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-1', mid: 'm.2', quickReply: 'Yes' }]);
      assert.equal((await call(url(), 'POST', `/channels/facebook/${agentId}`, tapped)).status, 200);
      const other = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-2', mid: 'm.3', text: 'hi' }]);
      assert.equal((await call(url(), 'POST', `/channels/facebook/${agentId}`, other)).status, 200);
      await fake.waitForSent(5);
      const list = await settled();
      const bySender = (sender: string) => list.filter((m: { senderKey: string }) => m.senderKey === sender);
      assert.deepEqual(
        bySender('PSID-1').map((m: { input: string; state: string }) => [m.input, m.state]),
        [
          ['Yes', 'DONE'],
          ['hello', 'DONE'],
        ],
      );
      assert.equal(new Set(bySender('PSID-1').map((m: { conversationId: string }) => m.conversationId)).size, 1);
      assert.notEqual(bySender('PSID-2')[0].conversationId, bySender('PSID-1')[0].conversationId);
      const conversation = await api.get(`/agents/${bySender('PSID-1')[0].conversationId}?returnCurrentStepOnly=false`);
      assert.equal(conversation.json.userId, 'facebook:PSID-1');
      assert.deepEqual(
        conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input),
        ['hello', 'Yes'],
      );
      assert.deepEqual(fake.refused, []);
    });

    it('a platform retry of a message already taken is acknowledged and not answered again', async () => {
      const before = fake.sent.length;
      const again = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-1', mid: 'm.2', quickReply: 'Yes' }]);
      assert.equal((await call(url(), 'POST', `/channels/facebook/${agentId}`, again)).status, 200);
      const next = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-1', mid: 'm.4', text: 'more' }]);
      assert.equal((await call(url(), 'POST', `/channels/facebook/${agentId}`, next)).status, 200);
      await fake.waitForSent(before + 1);
      await settled();
      assert.equal(fake.sent.length, before + 1, 'only the new message was answered');
      const list = await messages();
      assert.equal(list.filter((m: { messageKey: string }) => m.messageKey === 'm.2').length, 1);
    });

    it('wrong or missing Messenger signatures are refused and nothing is kept; the older SHA-1 header is accepted', async () => {
      const count = (await messages()).length;
      const delivery = messengerDelivery('not-the-app-secret', [{ sender: 'PSID-9', mid: 'm.bad', text: 'x' }]);
      const forged = await call(url(), 'POST', `/channels/facebook/${agentId}`, delivery);
      assert.equal(forged.status, 403, forged.text);
      assert.match(forged.headers.get('content-type') ?? '', /problem\+json/);
      const unsigned = await call(url(), 'POST', `/channels/facebook/${agentId}`, {
        body: delivery.body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(unsigned.status, 403);
      assert.equal((await messages()).length, count);

      const { createHmac } = await import('node:crypto');
      const body = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'PSID-3', mid: 'm.sha1', text: 'old' }]).body;
      const sha1 = `sha1=${createHmac('sha1', SECRETS.FB_APP_SECRET).update(body).digest('hex')}`;
      const older = await call(url(), 'POST', `/channels/facebook/${agentId}`, {
        body,
        headers: { 'content-type': 'application/json', 'x-hub-signature': sha1 },
      });
      assert.equal(older.status, 200, older.text);

      const notJson = 'not json';
      const signed = `sha256=${createHmac('sha256', SECRETS.FB_APP_SECRET).update(notJson).digest('hex')}`;
      const malformed = await call(url(), 'POST', `/channels/facebook/${agentId}`, {
        body: notJson,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signed },
      });
      assert.equal(malformed.status, 400, malformed.text);
      const notPage = messengerDelivery(SECRETS.FB_APP_SECRET, []);
      const instagram = notPage.body.replace('"page"', '"instagram"');
      const wrongObject = await call(url(), 'POST', `/channels/facebook/${agentId}`, {
        body: instagram,
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': `sha256=${createHmac('sha256', SECRETS.FB_APP_SECRET).update(instagram).digest('hex')}`,
        },
      });
      assert.equal(wrongObject.status, 400, wrongObject.text);
      await settled();
    });

    it('Slack: url_verification, signed events within the timestamp window, replies in the thread, one conversation per thread', async () => {
      const slackPost = (request: { body: string; headers: Record<string, string> }) =>
        call(url(), 'POST', `/channels/slack/${agentId}`, request);
      const handshake = await slackPost(
        slackRequest(SECRETS.SLACK_SIGNING, { token: 't', challenge: 'chal-3eZbrw1a', type: 'url_verification' }),
      );
      assert.equal(handshake.status, 200, handshake.text);
      assert.deepEqual(handshake.json, { challenge: 'chal-3eZbrw1a' });
      const unsigned = await call(url(), 'POST', `/channels/slack/${agentId}`, {
        json: { challenge: 'x', type: 'url_verification' },
      });
      assert.equal(unsigned.status, 403);
      const stale = slackRequest(
        SECRETS.SLACK_SIGNING,
        { challenge: 'x', type: 'url_verification' },
        Math.floor(Date.now() / 1000) - 600,
      );
      assert.equal((await slackPost(stale)).status, 403, 'a replayed request outside the window');

      const sentBefore = fake.sent.length;
      const opening = slackMessageEvent({
        eventId: 'Ev1',
        channel: 'C1',
        user: 'U1',
        ts: '1700000001.000100',
        text: 'hello bot',
      });
      assert.equal((await slackPost(slackRequest(SECRETS.SLACK_SIGNING, opening))).status, 200);
      await fake.waitForSent(sentBefore + 2);
      const replies = fake.sent.slice(sentBefore).map((m) => m.body);
      assert.deepEqual(replies, [
        { channel: 'C1', text: 'Welcome!', thread_ts: '1700000001.000100' },
        { channel: 'C1', text: 'Got it.', thread_ts: '1700000001.000100', blocks: quickReplyBlocks('Got it.') },
      ]);

      const inThread = slackMessageEvent({
        eventId: 'Ev2',
        channel: 'C1',
        user: 'U2',
        ts: '1700000002.000200',
        threadTs: '1700000001.000100',
        text: 'and more',
      });
      assert.equal((await slackPost(slackRequest(SECRETS.SLACK_SIGNING, inThread))).status, 200);
      const retry = slackRequest(SECRETS.SLACK_SIGNING, inThread);
      assert.equal(
        (await slackPost({ ...retry, headers: { ...retry.headers, 'x-slack-retry-num': '1' } })).status,
        200,
      );
      const fromBot = { ...opening, event_id: 'Ev3', event: { ...opening.event, ts: '1700000003.0003', bot_id: 'B1' } };
      assert.equal((await slackPost(slackRequest(SECRETS.SLACK_SIGNING, fromBot))).status, 200);
      const newThread = slackMessageEvent({
        eventId: 'Ev4',
        channel: 'C1',
        user: 'U1',
        ts: '1700000004.000400',
        text: 'new topic',
      });
      assert.equal((await slackPost(slackRequest(SECRETS.SLACK_SIGNING, newThread))).status, 200);
      await fake.waitForSent(sentBefore + 5);
      const list = (await settled()).filter((m: { platform: string }) => m.platform === 'slack');
      assert.deepEqual(
        list.map((m: { input: string; senderKey: string }) => [m.input, m.senderKey]),
        [
          ['new topic', 'C1:1700000004.000400'],
          ['and more', 'C1:1700000001.000100'],
          ['hello bot', 'C1:1700000001.000100'],
        ],
        'the retry and the bot message were left out',
      );
      assert.equal(list[1].conversationId, list[2].conversationId);
      assert.notEqual(list[0].conversationId, list[1].conversationId);
      assert.equal(fake.sent.length, sentBefore + 5);
      assert.deepEqual(fake.refused, []);
    });

    it("Slack: a reply's quick replies are buttons; a tap is answered in the thread's conversation, once", async () => {
      const slackPost = (request: { body: string; headers: Record<string, string> }) =>
        call(url(), 'POST', `/channels/slack/${agentId}`, request);
      const thread = '1700000010.000100';
      const sentBefore = fake.sent.length;
      const opening = slackMessageEvent({ eventId: 'Ev10', channel: 'C2', user: 'U1', ts: thread, text: 'hi' });
      assert.equal((await slackPost(slackRequest(SECRETS.SLACK_SIGNING, opening))).status, 200);
      await fake.waitForSent(sentBefore + 2);

      const tap = slackButtonTap(SECRETS.SLACK_SIGNING, {
        channel: 'C2',
        user: 'U1',
        replyTs: '1700000011.000200',
        threadTs: thread,
        value: 'Yes',
        actionTs: '1700000012.000300',
      });
      assert.equal((await slackPost(tap)).status, 200);
      assert.equal((await slackPost(tap)).status, 200, 'a delivery Slack retries is acknowledged again');
      await fake.waitForSent(sentBefore + 3);
      assert.deepEqual(fake.sent[sentBefore + 2]?.body, {
        channel: 'C2',
        text: 'Got it.',
        thread_ts: thread,
        blocks: quickReplyBlocks('Got it.'),
      });
      const list = (await settled()).filter((m: { senderKey: string }) => m.senderKey === `C2:${thread}`);
      assert.deepEqual(
        list.map((m: { input: string; state: string }) => [m.input, m.state]),
        [
          ['Yes', 'DONE'],
          ['hi', 'DONE'],
        ],
        'the tap is one message, in the conversation of its thread',
      );
      assert.equal(list[0].conversationId, list[1].conversationId);
      const conversation = await api.get(`/agents/${list[0].conversationId}?returnCurrentStepOnly=false`);
      assert.equal(conversation.json.userId, 'slack:U1');
      assert.deepEqual(
        conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input),
        ['hi', 'Yes'],
        'the button value is the input of the turn',
      );

      const unsigned = await call(url(), 'POST', `/channels/slack/${agentId}`, {
        body: tap.body,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(unsigned.status, 403);
      const noPayload = slackFormRequest(SECRETS.SLACK_SIGNING, 'nothing=here');
      const refused = await slackPost(noPayload);
      assert.equal(refused.status, 400, refused.text);
      assert.equal(fake.sent.length, sentBefore + 3);
      assert.deepEqual(fake.refused, []);
    });

    it('channel secrets stay vault references: never in a response or a log line', async () => {
      const agent = await api.get(`/agentstore/agents/${agentId}?version=1`);
      assert.deepEqual(agent.json.channels[0].config, channels[0]!.config);
      const literal = await api.post('/agentstore/agents', {
        json: {
          packages: [],
          channels: [{ type: 'svc://ai.svc.channel.slack', config: { botToken: 'xoxb-literal' } }],
        },
      });
      assert.equal(literal.status, 400);
      const listed = JSON.stringify(await messages());
      const logs = block.server.logLines.join('\n');
      for (const value of Object.values(SECRETS)) {
        assert.equal(listed.includes(value), false);
        assert.equal(logs.includes(value), false, 'a secret in the log');
      }
    });

    it('a channel whose agent is not deployed, or which it lacks, answers 404; its messages need USE on the agent', async () => {
      const plain = await deployAgent(api, { outputSet: outputs });
      const delivery = messengerDelivery(SECRETS.FB_APP_SECRET, [{ sender: 'P', mid: 'm.x', text: 'x' }]);
      assert.equal((await call(url(), 'POST', `/channels/facebook/${plain}`, delivery)).status, 404);
      assert.equal((await call(url(), 'POST', '/channels/slack/not-an-id', delivery)).status, 404);
      assert.equal((await api.get('/channels/0123456789abcdef01234567/messages')).status, 404);
    });
  });
}
