import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/**
 * A started service has V8's allocation-site pretenuring off (src/ops/pretenuring.ts, issue 15): objects of a
 * literal site whose objects lived long are still allocated in the young generation afterwards, so a turn's
 * short-lived objects die there. Checked in a process of its own (`%InYoungGeneration` needs natives syntax; the
 * setting is process-wide), against the same workload in a process that started no service.
 */
const script = (startService: boolean) => `
if (${startService}) {
  const { withScratchServer } = await import(${JSON.stringify(new URL('../scripts/scratch-server.ts', import.meta.url).href)});
  await withScratchServer(async () => undefined);
}
function entry(index) {
  return { key: 'k' + index, value: [index], timestamp: index };
}
// The site's objects outlive many young collections: V8 decides to allocate them old.
const kept = [];
for (let index = 0; index < 2_000_000; index++) {
  kept.push(entry(index));
  if (kept.length > 200_000) kept.splice(0, 100_000);
}
console.log(JSON.stringify({ young: %InYoungGeneration(entry(-1)) }));
`;

/** V8 decides to allocate a site old only at a young collection of the young generation's full size: fixed here. */
const YOUNG_GENERATION_AT_FULL_SIZE = ['--min-semi-space-size=4', '--max-semi-space-size=4'];

function youngAfterLongLivedObjects(startService: boolean): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pretenuring-'));
  try {
    const file = join(dir, 'check.mjs');
    writeFileSync(file, script(startService));
    const run = spawnSync(process.execPath, [...YOUNG_GENERATION_AT_FULL_SIZE, '--allow-natives-syntax', file], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(run.status, 0, run.stderr);
    return (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { young: boolean }).young;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('allocation-site pretenuring', () => {
  it('V8 on its own allocates a site old once its objects lived long (the workload shows it)', () => {
    assert.equal(youngAfterLongLivedObjects(false), false);
  });

  it('in a started service the site still allocates young', () => {
    assert.equal(youngAfterLongLivedObjects(true), true);
  });
});
