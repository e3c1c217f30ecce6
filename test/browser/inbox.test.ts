import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createResource, deployAgent, sendMessage, startConversation } from '../support/agents.ts';
import { WIDE, launchBrowser, screenshots, watchConsole } from '../support/browser.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The manager's inbox in Debian's Chromium: a turn that starts waiting for a person appears live (no reload), a
 * person answers in place of the agent, the item leaves the inbox and the conversation goes on with that answer.
 */
describe('web manager inbox (human in the loop)', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let agentId = '';

  before(async () => {
    server = await startTestServer('sqlite');
    const api = client(() => server.url);
    const rules = {
      behaviorGroups: [
        {
          name: 'G',
          behaviorRules: [
            {
              name: 'Always',
              actions: ['PAUSE_CONVERSATION'],
              conditions: [
                {
                  type: 'negation',
                  conditions: [{ type: 'actionmatcher', configs: { actions: 'CONVERSATION_START' } }],
                },
              ],
            },
          ],
        },
      ],
    };
    agentId = await deployAgent(api, {
      extensions: [
        {
          type: 'svc://ai.svc.behavior',
          config: { uri: await createResource(api, '/behaviorstore/behaviorsets', rules) },
        },
      ],
    });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: WIDE })).newPage();
    page.setDefaultTimeout(10_000);
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('shows a waiting turn live, and an answer sent from it resumes the conversation', async () => {
    const api = client(() => server.url);
    await page.goto(`${server.url}/manager/inbox`);
    const main = page.getByRole('main');
    await main.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await main.getByText('Nothing waits for a decision.').waitFor();
    await main.getByText('Stream: live').waitFor();

    const { conversationId } = await startConversation(api, agentId, { query: '?userId=grace' });
    const paused = await sendMessage(api, conversationId, 'I want to speak to someone');
    assert.equal(paused.conversationState, 'AWAITING_HUMAN');

    const item = main.getByRole('listitem', { name: /Paused turn · grace/ });
    await item.waitFor();
    await item.getByText('I want to speak to someone').waitFor();
    await screenshots(page, '30-inbox');
    await item.getByLabel('Answer in place of the agent').fill('Hello Grace, Maria here.');
    await item.getByRole('button', { name: 'Send answer' }).click();
    await item.waitFor({ state: 'detached' });
    await main.getByText('Nothing waits for a decision.').waitFor();

    const conversation = (await api.get(`/agents/${conversationId}`)).json;
    assert.equal(conversation.conversationState, 'READY');
    assert.deepEqual(conversation.conversationOutputs.at(-1).output, ['Hello Grace, Maria here.']);
    assert.deepEqual(consoleErrors.take(), []);
  });
});
