import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createResource, deploy, idFromLocation, onEveryMessage } from '../support/agents.ts';
import { WIDE, launchBrowser, screenshots, watchConsole } from '../support/browser.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Conversation regression tests in the web manager (issue 21), in Debian's Chromium against the real server:
 * record a transcript from the chat in one click, relax an expectation in the transcript editor, run it against a
 * chosen agent version and read the side-by-side diff of the run.
 */

/** An agent that welcomes and answers every message with `reply`; versions differ only in that text. */
async function agentBody(api: ReturnType<typeof client>, reply: string) {
  const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
  const output = await createResource(api, '/outputstore/outputsets', {
    outputSet: [
      {
        action: 'CONVERSATION_START',
        timesOccurred: 0,
        outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome to the shop.' }] }],
      },
      { action: 'reply', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: reply }] }] },
    ],
  });
  const workflow = await createResource(api, '/packagestore/packages', {
    packageExtensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: rules } },
      { type: 'svc://ai.svc.output', config: { uri: output } },
    ],
  });
  return { packages: [workflow] };
}

describe('web manager: transcripts', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let agentId = '';
  let transcriptUrl = '';
  const url = (path: string) => `${server.url}${path}`;
  const main = () => page.getByRole('main');

  before(async () => {
    server = await startTestServer('sqlite');
    const api = client(() => server.url);
    agentId = idFromLocation(await createResource(api, '/agentstore/agents', await agentBody(api, 'We open at nine.')));
    const updated = await api.put(`/agentstore/agents/${agentId}?version=1`, {
      json: await agentBody(api, 'We open at ten.'),
    });
    assert.equal(updated.status, 200, updated.text);
    await deploy(api, agentId, 1);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: WIDE })).newPage();
    page.setDefaultTimeout(10_000);
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('records a transcript from the chat in one click', async () => {
    await page.goto(url(`/manager/chat/${agentId}`));
    await main().getByRole('button', { name: 'Start conversation' }).click();
    await main().locator('.bubble.agent', { hasText: 'Welcome to the shop.' }).waitFor();
    await main().getByRole('textbox', { name: 'Message' }).fill('When do you open?');
    await main().getByRole('textbox', { name: 'Message' }).press('Enter');
    await main().locator('.bubble.agent', { hasText: 'We open at nine.' }).waitFor();

    await main().getByRole('button', { name: 'Record transcript' }).click();
    await page.waitForURL(/\/manager\/transcripts\/[0-9a-f]{24}$/);
    transcriptUrl = page.url();
    await main().getByRole('group', { name: 'Step 1: When do you open?' }).waitFor();
    const expected = main().getByRole('group', { name: 'Step 1: When do you open?' }).getByLabel('output expected');
    assert.equal(await expected.inputValue(), '["We open at nine."]');
    await screenshots(page, 'transcripts-01-recorded');
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('edits an expectation: the welcome is checked with a regular expression, saved as version 2', async () => {
    const start = main().getByRole('group', { name: 'Step 0: conversation start' });
    await start.getByLabel('output comparison').selectOption('regex');
    await start.getByLabel('output expected').fill('^Welcome');
    await start.getByLabel('actions comparison').selectOption('');
    await main().getByRole('button', { name: 'Save as a new version' }).click();
    await main().getByText('Saved as version 2.').waitFor();
    const api = client(() => server.url);
    const id = /transcripts\/([0-9a-f]{24})/.exec(transcriptUrl)![1]!;
    const saved = (await api.get(`/transcriptstore/transcripts/${id}?version=2`)).json;
    assert.deepEqual(saved.start.expected.output, { compare: 'regex', value: '^Welcome' });
    assert.equal(saved.start.expected.actions, undefined);
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('runs it against a chosen version and shows the failing field side by side', async () => {
    await page.goto(transcriptUrl);
    const form = main().getByRole('form', { name: 'Run the transcript' });
    await form.getByLabel('Agent version').selectOption('2');
    await form.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
    await main().getByText('1 step(s) failed').waitFor();
    const step = main().getByRole('region', { name: /Step 1: When do you open\?/ });
    const output = step.getByRole('row', { name: /^output/ });
    const [comparison, expected, actual, result] = await output.getByRole('cell').allInnerTexts();
    assert.equal(comparison, 'exact');
    assert.match(expected!, /"We open at nine\."/);
    assert.match(actual!, /"We open at ten\."/);
    assert.match(result!, /failed/);
    assert.match(result!, /- \[0\] "We open at nine\."\n\+ \[0\] "We open at ten\."/);
    assert.equal(await main().locator('section[data-passed="true"]').count(), 1, 'step 0 passed');
    await screenshots(page, 'transcripts-02-run-diff');

    await main().getByRole('link', { name: 'Back to the transcript' }).click();
    await form.getByLabel('Agent version').selectOption('1');
    await form.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f]{24}$/);
    await main().getByText('passed', { exact: true }).first().waitFor();
    assert.equal(await main().locator('section[data-passed="false"]').count(), 0);

    await main().getByRole('link', { name: 'Back to the transcript' }).click();
    const runs = main().getByRole('region', { name: 'Runs' });
    await runs.getByRole('row').nth(2).waitFor();
    assert.equal(await runs.getByText('failed').count(), 1);
    await screenshots(page, 'transcripts-03-runs');
    assert.deepEqual(consoleErrors.take(), []);
  });
});
