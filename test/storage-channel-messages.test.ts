import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChannelMessageRecord } from '../src/storage/channel-message-ports.ts';
import { storageTargets, useStorage } from './support/storage-targets.ts';

/** Inbound channel messages behave the same on both adapters: accepted once, claimed once, taken over after the lease. */
for (const type of ['sqlite', 'postgres'] as const) {
  describe(`channel messages in ${type}`, () => {
    const { storage, reopen } = useStorage(storageTargets[type]);
    const message = (id: string, messageKey: string, receivedOn: number): ChannelMessageRecord => ({
      id,
      platform: 'facebook',
      agentId: 'agent-1',
      messageKey,
      senderKey: 'PSID-1',
      userId: 'facebook:PSID-1',
      replyTo: '{"recipientId":"PSID-1"}',
      input: `text of ${messageKey}`,
      receivedOn,
      state: 'PENDING',
    });

    it('accepts a platform message once, claims it once, takes it over after the lease, keeps the first finish of a claim', async () => {
      const store = () => storage().channelMessages;
      assert.equal(await store().accept(message('a', 'm.1', 1_000)), true);
      assert.equal(await store().accept(message('a-retry', 'm.1', 1_500)), false, 'the platform retried');
      assert.equal(await store().accept({ ...message('b', 'm.1', 1_500), platform: 'slack' }), true);
      assert.equal(await store().accept(message('c', 'm.2', 2_000)), true);

      const claims = await Promise.all([1, 2, 3].map((n) => store().claim('a', `claim-${n}`, 3_000, 10_000)));
      const won = claims.filter((claim) => claim !== undefined);
      assert.equal(won.length, 1, 'one claim wins');
      assert.equal(won[0]!.state, 'PROCESSING');
      assert.equal(won[0]!.input, 'text of m.1');
      const winner = `claim-${claims.findIndex((claim) => claim !== undefined) + 1}`;

      assert.deepEqual(await store().stranded(5_000, 1_800, 10), ['b'], 'pending since before 1800, no lease run out');
      assert.deepEqual(await store().stranded(10_001, 1_800, 10), ['a', 'b'], 'the lease of a ran out');
      const takeover = await store().claim('a', 'claim-late', 10_001, 20_000);
      assert.equal(takeover?.state, 'PROCESSING');
      assert.equal(
        await store().finish('a', winner, { state: 'FAILED', finishedOn: 11_000, detail: 'too late' }),
        false,
        'the instance that lost the message cannot finish it',
      );
      assert.equal(
        await store().finish('a', 'claim-late', { state: 'DONE', finishedOn: 12_000, conversationId: 'conv-1' }),
        true,
      );
      assert.equal(await store().claim('a', 'claim-again', 30_000, 40_000), undefined, 'a finished message stays done');
      await store().setConversation('facebook', 'agent-1', 'PSID-1', 'conv-1');
      await store().setConversation('facebook', 'agent-1', 'PSID-1', 'conv-2');
      await reopen();

      const listed = await store().list('agent-1', 2);
      assert.deepEqual(
        listed.map((m) => [m.id, m.state]),
        [
          ['c', 'PENDING'],
          ['b', 'PENDING'],
        ],
      );
      const [a] = (await store().list('agent-1', 10)).filter((m) => m.id === 'a');
      assert.deepEqual(a, {
        ...message('a', 'm.1', 1_000),
        state: 'DONE',
        leaseUntil: undefined,
        finishedOn: 12_000,
        conversationId: 'conv-1',
        detail: undefined,
      });
      assert.equal(await store().conversationOf('facebook', 'agent-1', 'PSID-1'), 'conv-2');
      assert.equal(await store().conversationOf('slack', 'agent-1', 'PSID-1'), undefined);
    });
  });
}
