import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, PHONE, WIDE, launchBrowser, screenshots, watchConsole } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The web manager end to end, in Debian's Chromium against the real server (which serves web/dist): someone who
 * never read the API builds an agent with the guided form, deploys it, talks to it, exports and re-imports it,
 * stores a secret and watches the log. Every screen is checked for console errors and photographed at 1280 px
 * and 390 px (test/browser/artifacts/).
 */
describe('web manager', { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let agentId = '';
  let exportedZip = '';

  const url = (path: string) => `${server.url}${path}`;
  const main = () => page.getByRole('main');
  /** No console errors since the last check (expected HTTP refusals may be named). */
  const assertNoConsoleErrors = (allowed: RegExp[] = []) => {
    const errors = consoleErrors.take().filter((e) => !allowed.some((a) => a.test(e)));
    assert.deepEqual(errors, [], `console errors:\n${errors.join('\n')}`);
  };

  before(async () => {
    server = await startTestServer('sqlite', { 'svc.vault.master-key': 'test-key' });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: WIDE, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('serves the manager at / with deep links, and leaves API paths and missing files alone', async () => {
    for (const path of ['/', '/manager', '/manager/agents/0123456789abcdef01234567', '/manager/no/such/screen']) {
      const answer = await fetch(url(path));
      assert.equal(answer.status, 200, path);
      assert.match(answer.headers.get('content-type') ?? '', /text\/html/, path);
    }
    for (const path of ['/favicon.ico', '/assets/missing.js', '/q/nothing', '/agentstore/agents/x/y']) {
      const answer = await fetch(url(path));
      assert.equal(answer.status, 404, path);
      assert.match(answer.headers.get('content-type') ?? '', /problem\+json/, path);
    }
    assert.equal((await fetch(url('/q/health/ready'))).status, 200);
  });

  it('shows the dashboard', async () => {
    await page.goto(url('/'));
    await main().getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await main().getByText('Nothing is deployed yet').waitFor();
    await main().locator('.stat .badge', { hasText: 'UP' }).waitFor();
    await screenshots(page, '01-dashboard-empty');
    assertNoConsoleErrors();
  });

  it('builds an agent with the guided form', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Agents', exact: true }).click();
    await main().getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    await main().getByRole('link', { name: 'New agent' }).click();
    await main().getByRole('heading', { name: 'New agent' }).waitFor();

    // An empty name is refused with a message tied to the field.
    await main().getByRole('textbox', { name: 'Name', exact: true }).fill('');
    await main().getByRole('button', { name: 'Create agent' }).click();
    await main().getByRole('alert').getByText('Give the agent a name.').waitFor();

    await main().getByRole('textbox', { name: 'Name', exact: true }).fill('Test Greeter');
    await main().getByLabel('Description').fill('Greets and says goodbye.');
    await screenshots(page, '02-agent-create');
    await main().getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/manager\/agents\/[0-9a-f]{24}\?created=1$/);
    agentId = /agents\/([0-9a-f]{24})/.exec(page.url())![1]!;
    await main().getByRole('heading', { name: 'Test Greeter', level: 1 }).waitFor();
    // The workflow in pipeline order.
    await main().locator('.extensions > li > strong', { hasText: 'Templating' }).waitFor();
    const extensions = await main().locator('.extensions > li > strong').allTextContents();
    assert.deepEqual(extensions, ['Parser', 'Behavior rules', 'Output', 'Templating']);
    assertNoConsoleErrors();
  });

  it('deploys it and shows the live status', async () => {
    await main().getByRole('button', { name: 'Deploy to production' }).click();
    await main().getByTestId('status-production').getByText('READY').waitFor();
    await main().getByRole('button', { name: 'Undeploy from production' }).waitFor();
    await screenshots(page, '03-agent-detail');
    assertNoConsoleErrors();
  });

  it('chats with it: quick reply, undo, step details', async () => {
    await main().getByRole('link', { name: 'Chat', exact: true }).click();
    await main().getByRole('button', { name: 'Start conversation' }).click();
    const agentSays = (text: string) => main().locator('.bubble.agent', { hasText: text });
    await agentSays('Welcome! Say hello.').waitFor();

    await main().getByRole('textbox', { name: 'Message' }).fill('hello');
    await main().getByRole('textbox', { name: 'Message' }).press('Enter');
    await agentSays('Hello! How can I help you?').waitFor();

    await main().getByRole('group', { name: 'Quick replies' }).getByRole('button', { name: 'bye' }).click();
    await agentSays('Goodbye, see you soon!').waitFor();
    await screenshots(page, '04-chat');

    await main().getByRole('button', { name: 'Undo' }).click();
    await agentSays('Goodbye, see you soon!').waitFor({ state: 'detached' });
    await main().getByRole('button', { name: 'Redo' }).waitFor();
    assert.equal(await main().getByRole('button', { name: 'Redo' }).isEnabled(), true);
    assert.equal(await agentSays('Hello! How can I help you?').count(), 1);

    await main().getByRole('button', { name: 'Details of step 2' }).click();
    const drawer = page.getByRole('dialog', { name: 'Step 2' });
    await drawer.getByText('greeting(hello)').first().waitFor();
    await drawer.getByRole('heading', { name: 'Actions' }).waitFor();
    await screenshots(page, '05-chat-step-details');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    assertNoConsoleErrors();
  });

  it('lists conversations with filters and shows every step', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Conversations' }).click();
    await main().getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();
    await main().getByLabel('State').selectOption('READY');
    await main().locator('tbody tr').first().waitFor();
    assert.equal(await main().locator('tbody tr').count(), 1);
    await screenshots(page, '06-conversations');
    await main().locator('tbody tr a').first().click();
    await main().getByRole('heading', { name: 'Step 2' }).waitFor();
    await screenshots(page, '07-conversation-detail');
    assertNoConsoleErrors();
  });

  it('edits a resource: local parse errors and server problems at their line, versions and a diff', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Dictionaries' }).click();
    await main().getByRole('link', { name: 'Test Greeter words' }).click();
    await main().getByRole('heading', { name: 'Test Greeter words' }).waitFor();
    const editor = main().locator('.cm-content');
    await editor.waitFor();

    // A local parse error, at its line.
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(',');
    await main()
      .locator('.issues')
      .getByText(/after the end of the JSON value/)
      .waitFor();
    await page.keyboard.press('Backspace');
    await main().locator('.issues').waitFor({ state: 'detached' });

    // The service's strict-parse 400 names the field's path: shown at the line of that field.
    const doc = JSON.stringify(
      {
        words: [
          { word: 'hello', expressions: 'greeting(hello)' },
          { word: 'hey', expressions: 'greeting(hey)', bogus: true },
        ],
      },
      null,
      2,
    );
    await editor.fill(doc);
    await main().getByRole('button', { name: 'Save as new version' }).click();
    const bogusLine = doc.split('\n').findIndex((l) => l.includes('"bogus"')) + 1;
    await main()
      .locator('.issues')
      .getByRole('button', { name: `Line ${bogusLine}` })
      .waitFor();
    await main().locator('.issues').getByText(/bogus/).waitFor();
    assert.equal(await main().locator('.cm-issue-line').count(), 1);
    await screenshots(page, '08-resource-editor-problem');
    assertNoConsoleErrors([/status of 400/]);

    // A valid change makes version 2; the diff shows it.
    await editor.fill(
      JSON.stringify(
        {
          words: [
            { word: 'hello', expressions: 'greeting(hello)' },
            { word: 'hey', expressions: 'greeting(hey)' },
          ],
        },
        null,
        2,
      ),
    );
    await main().getByRole('button', { name: 'Save as new version' }).click();
    await main().getByText('Saved as version 2.').waitFor();
    await main()
      .getByText(/lines added/)
      .waitFor();
    assert.ok((await main().locator('.diff-added', { hasText: '"hey"' }).count()) >= 1);
    await main().getByRole('textbox', { name: 'Name', exact: true }).fill('Greeting words');
    await main().getByRole('button', { name: 'Save name and description' }).click();
    await main().getByRole('heading', { name: 'Greeting words', level: 1 }).waitFor();
    await screenshots(page, '09-resource-versions');
    assertNoConsoleErrors();
  });

  it('exports the agent as a ZIP', async () => {
    await page.goto(url(`/manager/agents/${agentId}`));
    await main().getByRole('heading', { name: 'Test Greeter', level: 1 }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      main().getByRole('button', { name: 'Export' }).click(),
    ]);
    assert.match(download.suggestedFilename(), new RegExp(`^${agentId}-1\\.zip$`));
    exportedZip = join(ARTIFACTS, 'exported-agent.zip');
    await download.saveAs(exportedZip);
    assertNoConsoleErrors();
  });

  it('imports it as a copy after a preview', async () => {
    assert.ok(exportedZip, 'the export test ran');
    await page.getByRole('navigation').getByRole('link', { name: 'Import / Export' }).click();
    await main().getByRole('heading', { name: 'Import / Export', level: 1 }).waitFor();
    await main().getByLabel('ZIP file').setInputFiles(exportedZip);
    await main().getByRole('button', { name: 'Preview' }).click();
    await main().getByRole('heading', { name: 'What the import would do' }).waitFor();
    const actions = await main().locator('tbody .badge').allTextContents();
    assert.ok(actions.length >= 4, `preview rows: ${actions.join(', ')}`);
    assert.ok(
      actions.every((a) => a === 'CREATE'),
      actions.join(', '),
    );
    await screenshots(page, '10-import-preview');
    await main().getByRole('button', { name: 'Import (create)' }).click();
    await main()
      .getByRole('link', { name: /Open the imported agent/ })
      .click();
    await page.waitForURL(/\/manager\/agents\/[0-9a-f]{24}$/);
    const copyId = /agents\/([0-9a-f]{24})/.exec(page.url())![1]!;
    assert.notEqual(copyId, agentId);
    await main().locator('.extensions > li').first().waitFor();
    const agents = (await (await fetch(url('/agentstore/agents/descriptors'))).json()) as unknown[];
    assert.equal(agents.length, 2);
    assertNoConsoleErrors();
  });

  it('stores a secret and lists it without its value', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Secrets' }).click();
    await main().getByRole('textbox', { name: 'Name', exact: true }).fill('API_TOKEN');
    await main().getByLabel('Value').fill('s3cr3t-value-123');
    await main().getByLabel('Description').fill('token for the weather API');
    await main().getByRole('button', { name: 'Save secret' }).click();
    const row = main().locator('tbody tr', { hasText: 'API_TOKEN' });
    await row.waitFor();
    await row.getByText('${vault:API_TOKEN}').waitFor();
    assert.equal(await main().getByLabel('Value').inputValue(), '');
    assert.ok(!(await page.content()).includes('s3cr3t-value-123'));
    await screenshots(page, '11-secrets');
    assertNoConsoleErrors();
  });

  it('maps an intent to the agent with a trigger', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Triggers' }).click();
    await main().getByRole('textbox', { name: 'Intent', exact: true }).fill('greet');
    await main().getByLabel('Deployment 1 agent').selectOption(agentId);
    await main().getByRole('button', { name: 'Create trigger' }).click();
    await main().locator('tbody tr', { hasText: 'greet' }).waitFor();
    await screenshots(page, '12-triggers');
    assertNoConsoleErrors();
  });

  it('streams the log and filters it', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Logs' }).click();
    await main()
      .getByText(/Stream: live/)
      .waitFor();
    const created = await fetch(url('/outputstore/outputsets'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outputSet: [] }),
    });
    assert.equal(created.status, 201);
    const id = /([0-9a-f]{24})\?version=1$/.exec(created.headers.get('location') ?? '')![1]!;
    await main().getByRole('log').getByText(new RegExp(id)).waitFor();
    await main().getByLabel('Search').fill(id);
    await main()
      .getByText(/Stream: live · \d+ entries/)
      .waitFor();
    await main().getByRole('log').getByText(new RegExp(id)).first().waitFor();
    // Once the stream restarts with the search, only matching entries remain.
    const others = main().getByRole('log').locator('tbody tr').filter({ hasNotText: id });
    for (let i = 0; i < 50 && (await others.count()) > 0; i++) await page.waitForTimeout(100);
    assert.equal(await others.count(), 0);
    await screenshots(page, '13-logs');
    assertNoConsoleErrors();
  });

  it('works at phone width with the menu, and on every other screen', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(url('/manager'));
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.click();
    await page.getByRole('navigation').getByRole('link', { name: 'Agents', exact: true }).click();
    await main().getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    assert.equal(await page.getByRole('navigation').isVisible(), false);
    await page.setViewportSize(WIDE);

    const screens: [string, string][] = [
      ['/manager', '14-dashboard'],
      ['/manager/agents', '15-agents'],
      ['/manager/resources/behaviorsets', '16-behaviorsets'],
      ['/manager/resources/workflows/new', '17-workflow-new'],
      ['/manager/chat', '18-chat-start'],
    ];
    for (const [path, name] of screens) {
      await page.goto(url(path));
      await main().locator('h1').waitFor();
      await page.waitForLoadState('networkidle');
      await screenshots(page, name);
    }
    await main()
      .getByRole('link', { name: 'Test Greeter' })
      .first()
      .waitFor()
      .catch(() => undefined);
    assertNoConsoleErrors();
  });
});
