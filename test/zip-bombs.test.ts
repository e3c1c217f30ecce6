import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { withDeclaredSize } from './fixtures/upstream-zip.ts';
import { call } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * ZIP bombs (issue 13, item 8): small uploads that inflate big are refused with a 4xx before any byte beyond the
 * budget (`svc.backup.max-zip-bytes`) is inflated, and inflating runs off the event loop, so that the health check
 * keeps answering while many such uploads are read at once.
 */

const MB = 1024 * 1024;
/** The default budget (svc.backup.max-zip-bytes) is 50 MiB. */
const zeros = (bytes: number) => new Uint8Array(bytes);
const bombOf = (bytes: number) => zipSync({ 'bomb.agent.json': zeros(bytes) }, { level: 9 });

describe('ZIP bombs', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.dispose());

  const upload = (zip: Uint8Array) =>
    call(server.url, 'POST', '/backup/import/preview', {
      body: zip,
      headers: { 'content-type': 'application/zip' },
    });

  it('refuses a ZIP that lies about its sizes and one that is honest but beyond the budget', async () => {
    const honest = bombOf(60 * MB);
    assert.ok(honest.length < 100_000, `${honest.length} bytes declaring 60 MiB`);
    const over = await upload(honest);
    assert.equal(over.status, 413, over.text);
    assert.match(over.json.detail, /unpacks to more than 52428800 bytes \(svc\.backup\.max-zip-bytes\)/);

    const lying = withDeclaredSize(bombOf(45 * MB), 'bomb.agent.json', 1000);
    const lied = await upload(lying);
    assert.equal(lied.status, 400, lied.text);
    assert.match(lied.json.detail, /unpacks to more than its declared 1000 bytes/);
  });

  it('keeps answering health checks while many small ZIPs that inflate big are uploaded at once', async (t) => {
    const bomb = bombOf(45 * MB);
    assert.ok(bomb.length < 100_000, `${bomb.length} bytes declaring 45 MiB`);
    let uploading = true;
    const latencies: number[] = [];
    const probe = (async () => {
      while (uploading) {
        const started = performance.now();
        const health = await call(server.url, 'GET', '/q/health/live');
        assert.equal(health.status, 200);
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const uploadsStarted = performance.now();
    const answers = await Promise.all(Array.from({ length: 16 }, () => upload(bomb)));
    const uploadsMs = performance.now() - uploadsStarted;
    uploading = false;
    await probe;
    for (const answer of answers) {
      assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status}: ${answer.text}`);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
    const slowest = Math.max(...latencies);
    t.diagnostic(
      `${latencies.length} health checks, the slowest in ${Math.round(slowest)} ms of ${Math.round(uploadsMs)}`,
    );
    assert.ok(latencies.length >= 5, `${latencies.length} health checks answered`);
    // A ratio, not a time: inflating on the event loop held every health check for most of the uploads.
    assert.ok(
      slowest < uploadsMs / 3,
      `the slowest health check took ${Math.round(slowest)} ms of the uploads' ${Math.round(uploadsMs)} ms`,
    );
  });
});
