import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  createAgent,
  createResource,
  deploy,
  idFromLocation,
  onEveryMessage,
  sendMessage,
  startConversation,
  welcomeOutputs,
} from '../support/agents.ts';
import { WIDE, launchBrowser, watchConsole } from '../support/browser.ts';
import { echoTask } from '../support/echo-task.ts';
import { memberAgent } from '../support/groups.ts';
import { client } from '../support/http.ts';
import { screenProblems, seriousAxeViolations, sidewaysScroll } from '../support/screen-checks.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Every screen of the web manager (issue 23), in Debian's Chromium against the real server: first the lists while
 * nothing exists (each must say what to do next), then every screen over a service with agents, a failed turn,
 * transcripts, a group, a schedule, a trigger and a secret. At 1366×900 and 390×844 no screen scrolls sideways and
 * axe-core finds no serious or critical violation; a screenshot of each is kept (test/browser/artifacts/).
 */
describe('web manager: every screen at both sizes', { timeout: 600_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  const url = (path: string) => `${server.url}${path}`;
  const main = () => page.getByRole('main');
  const api = client(() => server.url);
  const seeded = {
    greeter: '',
    weatherDesk: '',
    failedConversation: '',
    greeterConversation: '',
    weatherCalls: '',
    transcript: '',
    transcriptRun: '',
    group: '',
    discussion: '',
    schedule: '',
  };

  /** Problems found on the screens visited by the running test (all reported at its end). */
  let problems: string[] = [];
  /** Opens a screen, waits until it has its heading and its data, and checks it at both sizes. */
  const visit = async (path: string, name: string) => {
    await page.goto(url(path));
    await main().locator('h1').waitFor();
    // Screens with a live stream (logs, inbox) never go quiet: their first data is enough.
    await page.waitForLoadState('networkidle', { timeout: 3_000 }).catch(() => undefined);
    await main()
      .getByText('Loading…')
      .first()
      .waitFor({ state: 'detached', timeout: 5_000 })
      .catch(() => undefined);
    problems.push(...(await screenProblems(page, name)));
  };
  const assertNoProblems = () => {
    const found = problems;
    problems = [];
    assert.deepEqual(found, [], found.join('\n'));
  };
  const assertNoConsoleErrors = () => {
    const errors = consoleErrors.take();
    assert.deepEqual(errors, [], `console errors:\n${errors.join('\n')}`);
  };

  before(async () => {
    server = await startTestServer('sqlite', { 'svc.vault.master-key': 'test-key' }, [echoTask]);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: WIDE })).newPage();
    page.setDefaultTimeout(10_000);
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('says what to do next on every list while nothing exists', async () => {
    const kinds = (await api.get('/resourcekinds')).json as { slug: string }[];
    const lists: [string, string][] = [
      ['/manager', 'empty-dashboard'],
      ['/manager/agents', 'empty-agents'],
      ['/manager/conversations', 'empty-conversations'],
      ['/manager/chat', 'empty-chat'],
      ['/manager/secrets', 'empty-secrets'],
      ['/manager/triggers', 'empty-triggers'],
      ['/manager/inbox', 'empty-inbox'],
      ...kinds.map((k): [string, string] => [`/manager/resources/${k.slug}`, `empty-${k.slug}`]),
    ];
    for (const [path, name] of lists) {
      await visit(path, name);
      const empty = main().locator('.empty').first();
      if (!(await empty.isVisible())) problems.push(`${path}: no empty state`);
      else if ((await empty.locator('a, button').count()) === 0)
        problems.push(`${path}: the empty state offers no next action (${await empty.textContent()})`);
    }
    assertNoProblems();
    assertNoConsoleErrors();
  });

  it('seeds agents, a failed turn, a transcript with a run, a group, a schedule, a trigger and a secret', async () => {
    const outputs = await createResource(api, '/outputstore/outputsets', {
      outputSet: [
        ...welcomeOutputs.outputSet,
        { action: 'reply', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Noted.' }] }] },
      ],
    });
    const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
    seeded.greeter = await createAgent(api, {
      name: 'Greeter',
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: rules } },
        { type: 'svc://ai.svc.output', config: { uri: outputs } },
      ],
    });
    // Three versions, all deployed: starting a conversation always takes the newest READY one.
    const body = (await api.get(`/agentstore/agents/${seeded.greeter}?version=1`)).json;
    for (const version of [1, 2]) {
      const updated = await api.put(`/agentstore/agents/${seeded.greeter}?version=${version}`, { json: body });
      assert.equal(updated.status, 200, updated.text);
    }
    for (const version of [1, 2, 3]) await deploy(api, seeded.greeter, version);
    const greeterTalk = await startConversation(api, seeded.greeter);
    seeded.greeterConversation = greeterTalk.conversationId;
    await sendMessage(api, seeded.greeterConversation, 'hello');

    // An agent whose HTTP call is refused (nothing listens on port 1): its turns fail with a reason.
    const weatherRules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('weather'));
    const calls = await createResource(api, '/httpcallsstore/httpcalls', {
      targetServerUrl: 'http://127.0.0.1:1/',
      httpCalls: [{ name: 'forecast', actions: ['weather'], request: { path: '/forecast' } }],
    });
    seeded.weatherCalls = idFromLocation(calls);
    await api.patch(`/descriptorstore/descriptors/${seeded.weatherCalls}`, {
      json: { operation: 'SET', document: { name: 'Weather API' } },
    });
    seeded.weatherDesk = await createAgent(api, {
      name: 'Weather desk',
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: weatherRules } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: calls } },
        { type: 'svc://ai.svc.output', config: { uri: outputs } },
      ],
    });
    await deploy(api, seeded.weatherDesk);
    seeded.failedConversation = (await startConversation(api, seeded.weatherDesk)).conversationId;
    const failed = await sendMessage(api, seeded.failedConversation, 'rain tomorrow?');
    assert.equal(failed.conversationState, 'ERROR');

    const transcript = await api.post(`/transcriptstore/transcripts/from-conversation/${seeded.greeterConversation}`);
    assert.equal(transcript.status, 201, transcript.text);
    seeded.transcript = idFromLocation(transcript.headers.get('location'));
    const run = await api.post(`/transcriptstore/transcripts/${seeded.transcript}/runs?version=1`, {
      json: { agentId: seeded.greeter, agentVersion: 3 },
    });
    assert.ok(run.status === 200 || run.status === 201, run.text);
    seeded.transcriptRun = run.json.runId ?? run.json.id;
    assert.ok(seeded.transcriptRun, run.text);

    const [ada, bob] = [await memberAgent(api, 'Ada'), await memberAgent(api, 'Bob')];
    const group = await api.post('/groupstore/groups', {
      json: {
        name: 'Hosting panel',
        members: [
          { agentId: ada, displayName: 'Ada' },
          { agentId: bob, displayName: 'Bob' },
        ],
        moderatorAgentId: ada,
        style: 'ROUND_TABLE',
      },
    });
    assert.equal(group.status, 201, group.text);
    seeded.group = idFromLocation(group.headers.get('location'));
    const discussion = await api.post(`/groups/${seeded.group}/conversations`, { json: { input: 'Cloud or not?' } });
    assert.ok(discussion.status === 200 || discussion.status === 201, discussion.text);
    seeded.discussion = discussion.json.id ?? discussion.json.discussionId ?? discussion.json.conversationId;
    assert.ok(seeded.discussion, discussion.text);

    const schedule = await api.post('/schedulestore/schedules', {
      json: { agentId: seeded.greeter, intervalSeconds: 3600, message: 'status report' },
    });
    assert.equal(schedule.status, 201, schedule.text);
    seeded.schedule = idFromLocation(schedule.headers.get('location'));

    const trigger = await api.post('/bottriggerstore/bottriggers', {
      json: { intent: 'greet', botDeployments: [{ environment: 'production', botId: seeded.greeter }] },
    });
    assert.equal(trigger.status, 200, trigger.text);
    const secret = await api.put('/secretstore/secrets/default/WEATHER_KEY', {
      json: { value: 'not-shown', description: 'key of the weather API' },
    });
    assert.ok(secret.status < 300, secret.text);
  });

  it('offers in the chat only what a start runs, and shows a failed turn with its reason and step details', async () => {
    await page.goto(url(`/manager/chat/${seeded.greeter}`));
    const agent = main().getByLabel('Agent', { exact: true });
    await agent.locator('option').first().waitFor({ state: 'attached' });
    const options = await agent.locator('option').allTextContents();
    // Greeter has versions 1 to 3 deployed: a start runs the newest, so only that one is offered.
    assert.deepEqual(
      options.filter((o) => o.startsWith('Greeter')),
      ['Greeter v3 (production)'],
    );
    assert.ok(!options.some((o) => /[0-9a-f]{24}/.test(o)), options.join(', '));

    await page.goto(url(`/manager/chat/${seeded.weatherDesk}?conversation=${seeded.failedConversation}`));
    await main().getByRole('heading', { name: 'Conversation with Weather desk' }).waitFor();
    const failure = main().locator('.turn-error');
    await failure.getByText("ai.svc.httpcalls: HTTP call 'forecast' failed: the connection was refused").waitFor();
    await failure.getByRole('button', { name: 'See what failed in step 2' }).click();
    const drawer = page.getByRole('dialog', { name: 'Step 2' });
    await drawer.getByRole('heading', { name: 'Why the turn failed' }).waitFor();
    await drawer
      .getByText(/connection was refused/)
      .first()
      .waitFor();
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    assertNoConsoleErrors();
  });

  it('draws the pipeline as a flow of steps linking to their resources, with the last errors at their step', async () => {
    await page.goto(url(`/manager/agents/${seeded.weatherDesk}`));
    const flow = main().getByRole('list', { name: /^Steps of / });
    await flow.locator('.flow-step').nth(2).waitFor();
    assert.deepEqual(await flow.locator('.flow-step > strong').allTextContents(), [
      'Behavior rules',
      'HTTP calls',
      'Output',
    ]);
    const failing = flow.locator('.flow-step.failing');
    await failing.getByText(/connection was refused/).waitFor();
    assert.equal(await failing.count(), 1);
    assert.equal(await failing.locator('strong').textContent(), 'HTTP calls');
    // The step links to its resource by name, and the failure to the step of the conversation.
    await failing.getByRole('link', { name: 'Weather API v1' }).waitFor();
    await failing.getByRole('link', { name: /^step 2,/ }).click();
    await page.waitForURL(new RegExp(`/manager/conversations/${seeded.failedConversation}#step-2$`));
    await main().getByRole('heading', { name: 'Step 2' }).waitFor();
    await main().getByRole('heading', { name: 'Why the turn failed' }).waitFor();
    assertNoConsoleErrors();
  });

  it('shows ids short, whole on hover, with a copy button', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto(url('/manager/agents'));
    const row = main().locator('tbody tr', { hasText: 'Weather desk' });
    await row.locator('.id code').waitFor();
    assert.equal(await row.locator('.id code').getAttribute('title'), seeded.weatherDesk);
    await row.getByRole('button', { name: 'Copy the agent id' }).click();
    await row.getByText('Copied').waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), seeded.weatherDesk);
    assertNoConsoleErrors();
  });

  it('works by keyboard: a skip link to the content, a visible focus, the table boxes reachable', async () => {
    await page.goto(url('/manager/agents'));
    await main().locator('tbody tr').first().waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    assert.equal(await skip.evaluate((e) => e === e.ownerDocument.activeElement), true);
    assert.ok((await skip.boundingBox())!.x >= 0, 'the focused skip link is on the screen');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate<string>('document.activeElement.id'), 'main');
    // Tab on from the content reaches the header's action, the search field, then the list's box, each with a ring.
    for (const name of ['New agent', 'Search agents', 'Agents, table']) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<{ label: string; outline: string }>(
        "(({ activeElement: e }) => ({ label: e.getAttribute('aria-label') ?? e.labels?.[0]?.textContent ?? e.textContent.trim(), outline: getComputedStyle(e).outlineStyle }))(document)",
      );
      assert.equal(focused.label, name);
      assert.notEqual(focused.outline, 'none', `${name} shows its focus`);
    }
    assertNoConsoleErrors();
  });

  it('meets the layout and accessibility rules on every screen', async () => {
    const kinds = (await api.get('/resourcekinds')).json as { slug: string }[];
    const screens: [string, string][] = [
      ['/manager', 'dashboard'],
      ['/manager/agents', 'agents'],
      ['/manager/agents/new', 'agent-new'],
      [`/manager/agents/${seeded.greeter}`, 'agent-detail'],
      [`/manager/agents/${seeded.weatherDesk}`, 'agent-detail-failing'],
      ['/manager/chat', 'chat-start'],
      [`/manager/chat/${seeded.weatherDesk}?conversation=${seeded.failedConversation}`, 'chat-failed-turn'],
      ['/manager/conversations', 'conversations'],
      [`/manager/conversations/${seeded.failedConversation}`, 'conversation-detail'],
      [`/manager/transcripts/${seeded.transcript}`, 'transcript'],
      [`/manager/transcripts/${seeded.transcript}/runs/${seeded.transcriptRun}`, 'transcript-run'],
      [`/manager/groups/${seeded.group}`, 'group'],
      [`/manager/groups/${seeded.group}/discussions/${seeded.discussion}`, 'group-discussion'],
      [`/manager/schedules/${seeded.schedule}`, 'schedule'],
      ['/manager/backup', 'import-export'],
      ['/manager/secrets', 'secrets'],
      ['/manager/triggers', 'triggers'],
      ['/manager/channels', 'channels'],
      [`/manager/channels/${seeded.greeter}`, 'channels-agent'],
      ['/manager/logs', 'logs'],
      ['/manager/inbox', 'inbox'],
      ['/manager/memory', 'user-memory'],
      ['/manager/memory/ada', 'user-memory-user'],
      ['/manager/no/such/screen', 'not-found'],
      [`/manager/resources/httpcalls/${seeded.weatherCalls}`, 'resource-editor'],
      ...kinds.flatMap((k): [string, string][] => [
        [`/manager/resources/${k.slug}`, `list-${k.slug}`],
        [`/manager/resources/${k.slug}/new`, `new-${k.slug}`],
      ]),
    ];
    for (const [path, name] of screens) await visit(path, name);
    assertNoProblems();
    assertNoConsoleErrors();
  });

  it('draws the dashboard charts from the metrics over time, agents by name', async () => {
    await page.goto(url('/manager'));
    const overTime = main().getByRole('region', { name: 'Over time' });
    await overTime.locator('.line-chart canvas').first().waitFor();
    assert.equal(await overTime.locator('.line-chart').count(), 3);
    await overTime
      .getByRole('img', { name: /Turns per minute over the last hour: \d+ turns, [1-9]\d* failed/ })
      .waitFor();
    await overTime.locator('.bars').getByRole('link', { name: 'Weather desk' }).waitFor();
    await overTime.getByLabel('Last day').check();
    await overTime
      .getByRole('img', { name: /over the last day/ })
      .first()
      .waitFor();
    assertNoConsoleErrors();
  });

  it('follows the system setting into dark mode, readable everywhere it is checked', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      for (const [path, name] of [
        ['/manager', 'dark-dashboard'],
        [`/manager/agents/${seeded.weatherDesk}`, 'dark-agent-detail'],
        [`/manager/chat/${seeded.weatherDesk}?conversation=${seeded.failedConversation}`, 'dark-chat'],
        [`/manager/resources/httpcalls/${seeded.weatherCalls}`, 'dark-resource-editor'],
      ] as const) {
        await visit(path, name);
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
        if (background === 'rgb(246, 247, 249)') problems.push(`${path} keeps the light background`);
      }
      assertNoProblems();
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
    assertNoConsoleErrors();
  });

  it('keeps the checks honest: a page that scrolls sideways or has an unlabelled control is caught', async () => {
    await page.setContent(
      '<html lang="en"><title>t</title><body><main><h1>x</h1><div style="width:3000px">wide</div><input></main></body></html>',
    );
    assert.ok((await sidewaysScroll(page)) > 0);
    assert.ok((await seriousAxeViolations(page)).some((v) => v.includes('label')));
  });
});
