import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { createResource, deployAgent, onEveryMessage } from './support/agents.ts';
import { messengerDelivery, startFakeChannelApis, type FakeChannelApis } from './support/fake-channels.ts';
import { call, client } from './support/http.ts';
import { deployedOn, startInstances, type Instances } from './support/instances.ts';
import { startServiceProcess, waitFor, type ServiceProcess } from './support/process.ts';

/**
 * Messaging channels with several instances on one PostgreSQL database: a message delivered to every instance at
 * once (the platform retrying) is processed once, and a message whose instance died after acknowledging it is
 * answered by another instance without running its turn twice.
 */

const MASTER_KEY = 'channels-cluster-master-key-0123456789';
const APP_SECRET = 'cluster-app-secret';
const PAGE_TOKEN = 'cluster-page-token';

describe('messaging channels on several instances', () => {
  let cluster: Instances | undefined;
  let fake: FakeChannelApis;
  let instances: RunningServer[] = [];
  let doomed: ServiceProcess | undefined;
  let agentId = '';
  /** The in-process instances' clock: moved past a lease to take over a dead instance's message. */
  let offset = 0;
  const messages = async () => (await call(instances[0]!.url, 'GET', `/channels/${agentId}/messages`)).json;

  before(async () => {
    fake = await startFakeChannelApis({ pageAccessToken: PAGE_TOKEN, botToken: 'unused' });
    cluster = await startInstances(
      3,
      {
        'svc.vault.master-key': MASTER_KEY,
        'svc.channels.facebook.api-url': fake.facebookUrl,
        'svc.channels.retry-interval-millis': 0,
      },
      { clock: () => Date.now() + offset },
    );
    instances = cluster.servers;
    const api = client(() => instances[0]!.url);
    await api.put('/secretstore/secrets/default/APP_SECRET', { json: { value: APP_SECRET } });
    await api.put('/secretstore/secrets/default/VERIFY', { json: { value: 'verify' } });
    await api.put('/secretstore/secrets/default/PAGE_TOKEN', { json: { value: PAGE_TOKEN } });
    const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
    agentId = await deployAgent(api, {
      extensions: [{ type: 'svc://ai.svc.behavior', config: { uri: rules } }],
      outputSet: {
        outputSet: [
          { action: 'reply', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Noted.' }] }] },
        ],
      },
      agent: {
        channels: [
          {
            type: 'svc://ai.svc.channel.facebook',
            config: {
              appSecret: '${vault:APP_SECRET}',
              verificationToken: '${vault:VERIFY}',
              pageAccessToken: '${vault:PAGE_TOKEN}',
            },
          },
        ],
      },
    });
    for (const instance of instances) await deployedOn(instance.url, agentId);
  });
  after(async () => {
    await doomed?.stop('SIGKILL');
    await cluster?.close();
    await fake?.close();
  });

  it('the same message delivered to three instances at once is processed once', async () => {
    const delivery = messengerDelivery(APP_SECRET, [{ sender: 'PSID-A', mid: 'm.same', text: 'hello' }]);
    const answers = await Promise.all(
      instances.flatMap((instance) => [
        call(instance.url, 'POST', `/channels/facebook/${agentId}`, delivery),
        call(instance.url, 'POST', `/channels/facebook/${agentId}`, delivery),
      ]),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200, 200, 200, 200],
    );
    // A message is acknowledged before it is processed: the first one is done before the second is sent, so the
    // conversation's order below is the order of sending (two messages racing to two instances are not ordered).
    await waitFor(async () => {
      const all = await messages();
      return all.length === 1 && all[0].state === 'DONE' ? all : undefined;
    }, 'the first message done');
    const next = messengerDelivery(APP_SECRET, [{ sender: 'PSID-A', mid: 'm.next', text: 'again' }]);
    assert.equal((await call(instances[1]!.url, 'POST', `/channels/facebook/${agentId}`, next)).status, 200);
    await fake.waitForSent(2);
    const list = await waitFor(async () => {
      const all = await messages();
      return all.length === 2 && all.every((m: { state: string }) => m.state === 'DONE') ? all : undefined;
    }, 'both messages done');
    assert.equal(list[0].conversationId, list[1].conversationId);
    const conversation = await call(
      instances[2]!.url,
      'GET',
      `/agents/${list[0].conversationId}?returnCurrentStepOnly=false`,
    );
    assert.deepEqual(
      conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input),
      ['hello', 'again'],
    );
    assert.equal(fake.sent.length, 2, 'one reply per message');
  });

  it('an instance that dies after acknowledging a message leaves it to another, which answers it without a second turn', async () => {
    doomed = startServiceProcess({
      SVC_HTTP_PORT: '0',
      SVC_DATASTORE_TYPE: 'postgres',
      SVC_DATASTORE_POSTGRES_URL: cluster!.databaseUrl,
      SVC_VAULT_MASTER_KEY: MASTER_KEY,
      SVC_CHANNELS_FACEBOOK_API_URL: fake.facebookUrl,
      SVC_CHANNELS_RETRY_INTERVAL_MILLIS: '0',
    });
    const doomedUrl = await doomed.listening();
    await deployedOn(doomedUrl, agentId);
    const sentBefore = fake.sent.length;
    fake.hold = true; // the doomed instance runs the turn, then hangs sending the reply
    const delivery = messengerDelivery(APP_SECRET, [{ sender: 'PSID-B', mid: 'm.orphan', text: 'are you there' }]);
    const acknowledged = await call(doomedUrl, 'POST', `/channels/facebook/${agentId}`, delivery);
    assert.equal(acknowledged.status, 200, acknowledged.text);
    await fake.waitForHeld();
    await doomed.stop('SIGKILL');
    fake.hold = false;

    const [taken] = (await messages()).filter((m: { messageKey: string }) => m.messageKey === 'm.orphan');
    assert.equal(taken.state, 'PROCESSING', 'claimed by the instance that died');
    await instances[1]!.channels.sweep(0);
    assert.equal(
      (await messages()).find((m: { messageKey: string }) => m.messageKey === 'm.orphan').state,
      'PROCESSING',
      'its lease still runs',
    );

    offset = 10 * 60_000; // past the lease (turn timeout + claim margin)
    await Promise.all(instances.map((instance) => instance.channels.sweep(0)));
    const [done] = (await messages()).filter((m: { messageKey: string }) => m.messageKey === 'm.orphan');
    assert.equal(done.state, 'DONE', JSON.stringify(done));
    assert.deepEqual(
      fake.sent.slice(sentBefore).map((m) => m.body.message.text),
      ['Noted.'],
      'answered once',
    );
    const conversation = await call(
      instances[0]!.url,
      'GET',
      `/agents/${done.conversationId}?returnCurrentStepOnly=false`,
    );
    assert.deepEqual(
      conversation.json.conversationOutputs.slice(1).map((step: { input: string }) => step.input),
      ['are you there'],
      'the turn ran once',
    );
  });
});
