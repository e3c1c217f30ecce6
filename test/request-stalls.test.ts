import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentExample } from './fixtures/resources.ts';
import { client } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { type ServiceProcess, startServiceProcess } from './support/process.ts';
import { storeTypes } from './support/server.ts';

/** How long the health check may take while another request is being answered: far above normal, far below a stall. */
const HEALTH_PATIENCE_MS = 5_000;

async function healthAnswers(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/q/health/live`, { signal: AbortSignal.timeout(HEALTH_PATIENCE_MS) });
  await response.body?.cancel();
  return response.status;
}

// The server runs in a process of its own: a request that blocks its event loop must not block the test's clock.
for (const storeType of storeTypes) {
  describe(`descriptor filters on ${storeType} (issue 13: ReDoS)`, () => {
    let service: ServiceProcess;
    let baseUrl = '';
    let removeStore: () => Promise<void> = async () => {};
    const api = client(() => baseUrl);

    before(async () => {
      let env: Record<string, string>;
      if (storeType === 'sqlite') {
        const dir = await mkdtemp(join(tmpdir(), 'svc-redos-'));
        env = { SVC_DATASTORE_TYPE: 'sqlite', SVC_DATASTORE_SQLITE_PATH: join(dir, 'svc.db') };
        removeStore = () => rm(dir, { recursive: true, force: true });
      } else {
        const database = await createTestDatabase();
        env = { SVC_DATASTORE_TYPE: 'postgres', SVC_DATASTORE_POSTGRES_URL: database.url };
        removeStore = database.drop;
      }
      service = startServiceProcess({ ...env, SVC_HTTP_PORT: '0' });
      baseUrl = await service.listening();
    });
    after(async () => {
      // SIGKILL: a server still stuck in a backtracking match would not see a SIGTERM for a minute.
      await service?.stop('SIGKILL');
      await removeStore();
    });

    it('a catastrophic-backtracking pattern is plain text: the server keeps answering', async () => {
      // Every descriptor id is 24 hex digits, which this pattern, as a regular expression, takes minutes to reject.
      assert.equal((await api.post('/agentstore/agents', { json: agentExample })).status, 201);
      const evil = encodeURIComponent('^([0-9a-f]+[0-9a-f]?)+z$');
      const listing = api.get(`/agentstore/agents/descriptors?filter=${evil}`);
      listing.catch(() => undefined); // awaited below; a stuck server must fail the test, not the run
      assert.equal(await healthAnswers(baseUrl), 200, 'the health check answers while the filter runs');
      const answer = await listing;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json, [], 'no name, description or id contains that text');
    });
  });
}
