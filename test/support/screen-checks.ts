import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { PHONE, WIDE, screenshots } from './browser.ts';

/**
 * What every screen of the manager must meet at both sizes (issue 23): the page never scrolls sideways, and
 * axe-core (injected into the page) finds no serious or critical accessibility violation.
 */

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[]; readonly failureSummary?: string }[];
}

/*
 * The code run in the page is given as text: this project's type-check has no DOM library (it checks the server),
 * and Playwright evaluates a string as an expression in the page.
 */

/** The serious and critical axe violations of the page as it is now, one line each (empty when none). */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.addScriptTag({ path: AXE_SCRIPT });
  const violations = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} at ${v.nodes
          .slice(0, 4)
          .map((n) => `${n.target.join(' ')}${n.failureSummary ? ` (${n.failureSummary.replace(/\s+/g, ' ')})` : ''}`)
          .join('; ')}`,
    );
}

/** The innermost elements reaching past the right edge of the window (what makes a page scroll sideways). */
function widest(page: Page): Promise<string> {
  return page.evaluate<string>(`(() => {
    const past = [...document.querySelectorAll('body *')].filter(
      (e) => e.getBoundingClientRect().right > window.innerWidth + 1 && e.parentElement.closest('.table-box, pre, .cm-editor') === null,
    );
    const innermost = past.filter((e) => !past.some((other) => other !== e && e.contains(other)));
    return innermost
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))
      .join(', ');
  })()`);
}

/** How far the page scrolls sideways (0 when it does not). */
export function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate<number>('Math.max(0, document.documentElement.scrollWidth - window.innerWidth)');
}

/**
 * Checks the screen at the desktop size and at phone size and keeps a screenshot of each
 * (test/browser/artifacts/<name>-<width>.png); answers what is wrong (sideways scroll, serious axe violations),
 * empty when nothing is. Ends at the desktop size.
 */
export async function screenProblems(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  for (const size of [WIDE, PHONE]) {
    await page.setViewportSize(size);
    // Layout settles in the frame after a resize.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const where = `${name} at ${size.width}×${size.height}`;
    const overflow = await sidewaysScroll(page);
    if (overflow > 0) problems.push(`${where} scrolls sideways by ${overflow} px: ${await widest(page)}`);
    for (const violation of await seriousAxeViolations(page)) problems.push(`${where}: ${violation}`);
  }
  await screenshots(page, name);
  return problems;
}
