import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { deployAgent, startConversation } from './support/agents.ts';
import { controlExtension, controlTask } from './support/control-task.ts';
import { call, client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * Backups of the embedded store (issue 19 item 6): `node src/db.ts backup` run as its own process while a server
 * answers turns, then `restore` into a fresh data folder and a server started on it. Every conversation and turn
 * acknowledged before the backup began is there, and the restored file passes `PRAGMA integrity_check`.
 */

const ROOT = new URL('..', import.meta.url).pathname;

/** Runs `node src/db.ts ...args` with the given environment; answers its exit code and output. */
function db(args: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['src/db.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: stdout + stderr });
      },
    );
  });
}

describe('backups of the embedded store', () => {
  let dir: string;
  let server: TestServer;
  const api = client(() => server.url);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-db-backup-'));
    server = await startTestServer('sqlite', {}, [controlTask]);
  });
  after(async () => {
    await server?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a consistent copy while turns run; restored, it serves every turn acknowledged before', async () => {
    const database = join(server.storeFolder!, 'svc.db');
    const agentId = await deployAgent(api, { extensions: [controlExtension] });

    // Load: four clients, each starting conversations and sending messages until told to stop.
    const acknowledged = new Map<string, number>();
    let stop = false;
    const clients = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const { conversationId } = await startConversation(api, agentId);
        acknowledged.set(conversationId, 0);
        for (let n = 1; n <= 5 && !stop; n++) {
          const answer = await api.post(`/agents/${conversationId}`, { json: { input: `message ${n}` } });
          assert.equal(answer.status, 200, answer.text);
          acknowledged.set(conversationId, n);
        }
      }
    });
    while (acknowledged.size < 8) await new Promise((resolve) => setTimeout(resolve, 10));

    const before = new Map(acknowledged);
    const backupFile = join(dir, 'backups', 'svc-backup.db');
    const taken = await db(['backup', backupFile], { SVC_DATASTORE_SQLITE_PATH: database });
    const during = acknowledged.size;
    stop = true;
    await Promise.all(clients);
    assert.equal(taken.code, 0, taken.output);
    assert.match(taken.output, /integrity ok/);
    assert.ok(during > before.size, 'turns went on while the backup ran');

    // Restore into a fresh data folder and start a server on it.
    const restored = join(dir, 'restored', 'svc.db');
    const restore = await db(['restore', backupFile, '--database', restored]);
    assert.equal(restore.code, 0, restore.output);
    const check = new DatabaseSync(restored, { readOnly: true });
    assert.deepEqual(
      check
        .prepare('PRAGMA integrity_check')
        .all()
        .map((row) => row.integrity_check),
      ['ok'],
    );
    check.close();
    const fresh = await startTestServer('sqlite', { 'svc.datastore.sqlite.path': restored }, [controlTask]);
    try {
      for (const [conversationId, messages] of before) {
        const stored = await call(fresh.url, 'GET', `/agents/${conversationId}?returnCurrentStepOnly=false`);
        assert.equal(stored.status, 200, stored.text);
        const inputs = stored.json.conversationOutputs.slice(1).map((output: any) => output.input);
        assert.ok(inputs.length >= messages, `${conversationId}: ${inputs.length} of ${messages} messages`);
        assert.deepEqual(
          inputs,
          inputs.map((_: unknown, i: number) => `message ${i + 1}`),
          'whole turns, in order',
        );
      }
      // The restored service goes on: the deployment came back with it and conversations continue.
      const [someone] = before.keys();
      assert.equal(
        (await call(fresh.url, 'POST', `/agents/${someone}`, { json: { input: 'after restore' } })).status,
        200,
      );
    } finally {
      await fresh.dispose();
    }
  });

  it('refuses to overwrite: an existing backup file, or a database without --replace; a damaged backup is refused', async () => {
    const database = join(server.storeFolder!, 'svc.db');
    const file = join(dir, 'once.db');
    assert.equal((await db(['backup', file, '--database', database])).code, 0);
    const again = await db(['backup', file, '--database', database]);
    assert.equal(again.code, 1);
    assert.match(again.output, /exists already/);

    const target = join(dir, 'target.db');
    assert.equal((await db(['restore', file, '--database', target])).code, 0);
    const over = await db(['restore', file, '--database', target]);
    assert.equal(over.code, 1);
    assert.match(over.output, /--replace/);
    assert.equal((await db(['restore', file, '--database', target, '--replace'])).code, 0);
    assert.equal((await db(['check', target])).code, 0);

    const damaged = join(dir, 'damaged.db');
    await writeFile(damaged, 'SQLite format 3\0 but not really a database');
    const refused = await db(['restore', damaged, '--database', join(dir, 'never.db')]);
    assert.equal(refused.code, 1);
    assert.match(refused.output, /integrity check/);
    assert.equal((await db(['check', damaged])).code, 1);

    const postgres = await db(['backup', join(dir, 'pg.db')], { SVC_DATASTORE_TYPE: 'postgres' });
    assert.equal(postgres.code, 1);
    assert.match(postgres.output, /pg_dump/);
  });
});
