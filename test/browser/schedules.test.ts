import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { deployAgent, idFromLocation, sayContext } from '../support/agents.ts';
import { openPage, screenshots } from '../support/browser.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Schedules in the web manager (issue 18), in Debian's Chromium against the real server: find a schedule among the
 * resources, read when it runs next, see its runs with their conversations, and switch it off.
 */
describe('web manager: schedules', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: { take(): string[] };
  let now = Date.parse('2026-03-02T08:00:30Z');
  let scheduleId = '';
  const main = () => page.getByRole('main');

  before(async () => {
    server = await startTestServer('sqlite', { 'svc.schedules.poll-interval-millis': 0 }, [], { clock: () => now });
    const api = client(() => server.url);
    const agentId = await deployAgent(api, { outputSet: { outputSet: [] } });
    const created = await api.post('/schedulestore/schedules', {
      json: { agentId, intervalSeconds: 3600, message: 'status report', context: sayContext('All systems nominal') },
    });
    assert.equal(created.status, 201, created.text);
    scheduleId = idFromLocation(created.headers.get('location'));
    const named = await api.patch(`/descriptorstore/descriptors/${scheduleId}`, {
      json: { operation: 'SET', document: { name: 'Hourly status' } },
    });
    assert.equal(named.status, 200, named.text);
    ({ browser, page, consoleErrors } = await openPage());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('lists schedules among the resources and shows when one runs and what it sends', async () => {
    await page.goto(`${server.url}/manager`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
    await main().getByRole('link', { name: 'Hourly status' }).click();
    await page.waitForURL(new RegExp(`/manager/schedules/${scheduleId}$`));
    await main().getByRole('heading', { name: 'Hourly status' }).waitFor();
    assert.equal(await main().getByTestId('schedule-timing').textContent(), 'every 3600 s');
    assert.equal(
      await main().getByTestId('schedule-next-run').textContent(),
      await page.evaluate((time) => new Date(time).toLocaleString(), now + 3_600_000),
    );
    await main().getByText('No runs yet.').waitFor();
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('shows each run with its outcome and a link to its conversation', async () => {
    now += 3_600_000;
    await server.server.scheduler.tick();
    await page.reload();
    const runs = main().getByRole('region', { name: 'Runs' });
    await runs.getByText('OK', { exact: true }).waitFor();
    await screenshots(page, 'schedules-01-runs');
    await runs.getByRole('link').first().click();
    await page.waitForURL(/\/manager\/conversations\/[0-9a-f]{24}$/);
    await main().getByText('All systems nominal').first().waitFor();
    assert.deepEqual(consoleErrors.take(), []);
  });

  it('switches a schedule off as a new version', async () => {
    await page.goto(`${server.url}/manager/schedules/${scheduleId}`);
    await main().getByRole('button', { name: 'Disable' }).click();
    await main().getByRole('button', { name: 'Enable' }).waitFor();
    await main().getByText('version 2').waitFor();
    assert.equal(await main().getByTestId('schedule-next-run').textContent(), '—');
    const saved = await client(() => server.url).get(`/schedulestore/schedules/${scheduleId}?version=2`);
    assert.equal(saved.json.enabled, false);
    assert.deepEqual(consoleErrors.take(), []);
  });
});
