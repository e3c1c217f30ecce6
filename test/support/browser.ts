import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots land here (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../browser/artifacts/', import.meta.url));

const MANAGER_INDEX = fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));

/**
 * Headless Chromium with the flags this machine needs (no sandbox as root; no background networking, which the
 * closed network refuses). Playwright gives every launch a fresh, empty profile.
 */
export async function launchBrowser(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium`);
  assert.ok(existsSync(MANAGER_INDEX), 'The manager is not built: npm run build:web');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Collects console errors and uncaught page errors; `take()` answers and forgets them. */
export function watchConsole(page: Page): { take(): string[] } {
  let errors: string[] = [];
  page.on('console', (message) => {
    const error = `console: ${message.text()} (${message.location().url})`;
    if (message.type() === 'error') errors.push(error);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return {
    take() {
      const out = errors;
      errors = [];
      return out;
    },
  };
}

/** The desktop size the manager is judged at (issue 23). */
export const WIDE = { width: 1366, height: 900 };

/** A browser with one wide page (10 s timeouts) whose console errors are collected. */
export async function openPage(): Promise<{ browser: Browser; page: Page; consoleErrors: { take(): string[] } }> {
  const browser = await launchBrowser();
  const page = await (await browser.newContext({ viewport: WIDE })).newPage();
  page.setDefaultTimeout(10_000);
  return { browser, page, consoleErrors: watchConsole(page) };
}
export const PHONE = { width: 390, height: 844 };

/** Full-page screenshots at the desktop width and at phone width (390 px), then back to the desktop width. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.setViewportSize(WIDE);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-${WIDE.width}.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize(WIDE);
}
