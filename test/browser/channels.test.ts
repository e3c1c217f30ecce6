import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { deployAgent } from '../support/agents.ts';
import { openPage, screenshots } from '../support/browser.ts';
import { messengerDelivery, startFakeChannelApis, type FakeChannelApis } from '../support/fake-channels.ts';
import { call, client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Messaging channels in the web manager (issue 18), in Debian's Chromium against the real server: pick an agent,
 * read the webhook address and the channel settings (vault references only), and follow a received message to
 * its conversation.
 */
describe('web manager: channels', { timeout: 120_000 }, () => {
  let server: TestServer;
  let fake: FakeChannelApis;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let agentId = '';
  const main = () => page.getByRole('main');

  before(async () => {
    fake = await startFakeChannelApis({ pageAccessToken: 'page-token-value', botToken: 'unused' });
    server = await startTestServer('sqlite', {
      'svc.vault.master-key': 'channels-browser-master-key-0123456789',
      'svc.channels.facebook.api-url': fake.facebookUrl,
    });
    const api = client(() => server.url);
    for (const [name, value] of [
      ['APP_SECRET', 'app-secret-value'],
      ['VERIFY', 'verify-value'],
      ['PAGE_TOKEN', 'page-token-value'],
    ])
      assert.ok((await api.put(`/secretstore/secrets/default/${name}`, { json: { value } })).status < 300);
    agentId = await deployAgent(api, {
      name: 'Shop assistant',
      outputSet: {
        outputSet: [
          {
            action: 'CONVERSATION_START',
            timesOccurred: 0,
            outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome to the shop.' }] }],
          },
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
    const delivery = messengerDelivery('app-secret-value', [
      { sender: 'PSID-42', mid: 'm.1', text: 'Do you ship abroad?' },
    ]);
    assert.equal((await call(server.url, 'POST', `/channels/facebook/${agentId}`, delivery)).status, 200);
    await fake.waitForSent(1);
    ({ browser, page, consoleErrors } = await openPage());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    await fake?.close();
  });

  it("shows an agent's channels with their webhook and vault references, and the messages received", async () => {
    await page.goto(`${server.url}/manager`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Channels' }).click();
    await main().getByLabel('Agent').selectOption({ label: 'Shop assistant' });
    await page.waitForURL(new RegExp(`/manager/channels/${agentId}$`));
    const channel = main().getByTestId('channel');
    await channel.getByText(`${server.url}/channels/facebook/${agentId}`).waitFor();
    await channel.getByText('${vault:PAGE_TOKEN}').waitFor();
    assert.equal(await main().getByText('page-token-value').count(), 0, 'no secret value on the screen');

    const messages = main().getByRole('region', { name: 'Messages received' });
    const row = messages.getByRole('row', { name: /Do you ship abroad\?/ });
    await row.getByText('DONE').waitFor();
    await screenshots(page, 'channels-01-messages');
    await row.getByRole('link').click();
    await page.waitForURL(/\/manager\/conversations\/[0-9a-f]{24}$/);
    await main().getByText('Do you ship abroad?').first().waitFor();
    assert.deepEqual(consoleErrors.take(), []);
  });
});
