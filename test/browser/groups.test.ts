import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { idFromLocation } from '../support/agents.ts';
import { openPage, screenshots } from '../support/browser.ts';
import { controlTask } from '../support/control-task.ts';
import { echoTask } from '../support/echo-task.ts';
import { memberAgent } from '../support/groups.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Group conversations in the web manager (issue 18), in Debian's Chromium against the real server: open a group,
 * ask it a question, read the transcript phase by phase with the conclusion, and ask a follow-up.
 */
describe('web manager: group conversations', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let groupId = '';
  const main = () => page.getByRole('main');

  before(async () => {
    server = await startTestServer('sqlite', {}, [echoTask, controlTask]);
    const api = client(() => server.url);
    const [ada, bob, mod] = [
      await memberAgent(api, 'Ada'),
      await memberAgent(api, 'Bob'),
      await memberAgent(api, 'Mod'),
    ];
    const created = await api.post('/groupstore/groups', {
      json: {
        name: 'Hosting panel',
        members: [
          { agentId: ada, displayName: 'Ada' },
          { agentId: bob, displayName: 'Bob' },
        ],
        moderatorAgentId: mod,
        style: 'ROUND_TABLE',
      },
    });
    assert.equal(created.status, 201, created.text);
    groupId = idFromLocation(created.headers.get('location'));
    const named = await api.patch(`/descriptorstore/descriptors/${groupId}`, {
      json: { operation: 'SET', document: { name: 'Hosting panel' } },
    });
    assert.equal(named.status, 200, named.text);
    ({ browser, page, consoleErrors } = await openPage());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('asks a group a question and shows the transcript phase by phase with the conclusion', async () => {
    await page.goto(`${server.url}/manager`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Groups' }).click();
    await main().getByRole('link', { name: 'Hosting panel' }).click();
    await page.waitForURL(new RegExp(`/manager/groups/${groupId}$`));
    const membersTable = main().getByRole('region', { name: 'Members' });
    await membersTable.getByRole('row', { name: /Ada/ }).waitFor();
    await membersTable.getByRole('row', { name: /Moderator/ }).waitFor();

    const ask = main().getByRole('form', { name: 'Ask the group' });
    await ask.getByLabel('Question').fill('Cloud or on premises?');
    await ask.getByRole('button', { name: 'Ask the group' }).click();
    await page.waitForURL(/\/discussions\/[0-9a-f]{24}$/);
    const first = main().getByRole('region', { name: 'Question 1' });
    await first.getByTestId('synthesis').waitFor();
    assert.match((await first.getByTestId('synthesis').textContent()) ?? '', /Conclusion: Mod: You are Moderator/);
    const round = first.getByRole('region', { name: 'Round 1' });
    assert.equal(await round.getByRole('listitem').count(), 2);
    assert.match((await round.getByRole('listitem').first().textContent()) ?? '', /^Ada\s+Ada: You are Ada/);
    await screenshots(page, 'groups-01-discussion');
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('asks a follow-up in the same discussion and lists the discussion on the group', async () => {
    const followUp = main().getByRole('form', { name: 'Ask a follow-up' });
    await followUp.getByLabel('Question').fill('And which region?');
    await followUp.getByRole('button', { name: 'Ask a follow-up' }).click();
    const second = main().getByRole('region', { name: 'Question 2' });
    await second.getByTestId('synthesis').waitFor();
    assert.match((await second.getByRole('heading', { level: 2 }).textContent()) ?? '', /And which region\?/);

    await main().getByRole('link', { name: 'Back to the group' }).click();
    const discussions = main().getByRole('region', { name: 'Discussions' });
    await discussions.getByRole('link', { name: 'Cloud or on premises?' }).waitFor();
    assert.equal(await discussions.getByRole('row').count(), 2, 'a header and one discussion');
    assert.deepEqual(consoleErrors.take(), []);
  });
});
