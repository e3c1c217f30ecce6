import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { createResource, deployAgent, onEveryMessage, startConversation } from './support/agents.ts';
import { client, type Answer } from './support/http.ts';
import { startServiceProcess, type ServiceProcess } from './support/process.ts';

/**
 * The disk of the embedded store filling up (issue 19, item 5). The service runs in its own process under a file
 * size limit (RLIMIT_FSIZE, set and lifted with `prlimit`): past it every write that would grow a file fails
 * with EFBIG, exactly where a full disk fails with ENOSPC, and nothing else on the machine is affected. SQLite
 * reports EFBIG as SQLITE_IOERR_WRITE (a full disk as SQLITE_FULL); both are clear problems, never a 500.
 */
describe('the disk of the embedded store fills up', () => {
  let folder: string;
  let service: ServiceProcess;
  let url = '';
  const api = client(() => url);
  let conversationId: string;
  const limitFileSize = (bytes: number | 'unlimited') =>
    execFileSync('prlimit', ['--pid', String(service.child.pid), `--fsize=${bytes}:unlimited`]);

  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'svc-disk-full-'));
    service = startServiceProcess(
      {
        SVC_HTTP_PORT: '0',
        SVC_DATASTORE_SQLITE_PATH: join(folder, 'svc.db'),
        SVC_AUDIT_DEAD_LETTER_PATH: join(folder, 'audit-dead-letter.jsonl'),
      },
      ['prlimit', '--fsize=unlimited:unlimited', '--'],
    );
    url = await service.listening();
    const rules = await createResource(api, '/behaviorstore/behaviorsets', onEveryMessage('reply'));
    const agentId = await deployAgent(api, {
      extensions: [{ type: 'svc://ai.svc.behavior', config: { uri: rules } }],
      outputSet: {
        outputSet: [
          { action: 'reply', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Noted.' }] }] },
        ],
      },
    });
    conversationId = (await startConversation(api, agentId)).conversationId;
  });

  after(async () => {
    await service?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('a write that finds no space answers a clear problem; reads go on; once there is space again writes work; the file is intact', async () => {
    const acknowledged: string[] = [];
    const refused: Answer[] = [];
    // The files may grow by a few turns' worth at most, then the disk is "full"
    const sizes = ['svc.db', 'svc.db-wal'].map((name) => statSync(join(folder, name)).size);
    limitFileSize(Math.max(...sizes) + 48 * 1024);
    const filler = 'x'.repeat(16 * 1024);
    for (let n = 0; n < 200 && refused.length < 3; n++) {
      const input = `message ${n} ${filler}`;
      const answer = await api.post(`/agents/${conversationId}`, { json: { input } });
      if (answer.status === 200) acknowledged.push(input);
      else refused.push(answer);
    }
    assert.equal(refused.length, 3, 'writes fail once the files cannot grow');
    assert.ok(acknowledged.length > 0, 'turns were stored until then');
    for (const answer of refused) {
      assert.ok([503, 507].includes(answer.status), `${answer.status} ${answer.text}`);
      assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.match(answer.json.detail, /embedded store (cannot write|is out of space)/);
    }
    const read = await api.get(`/agents/${conversationId}`);
    assert.equal(read.status, 200, 'reading still works');
    assert.equal((await api.get('/q/health/live')).status, 200);

    limitFileSize('unlimited');
    const after = await api.post(`/agents/${conversationId}`, { json: { input: 'space again' } });
    assert.equal(after.status, 200, after.text);
    acknowledged.push('space again');

    const conversation = await api.get(`/agents/${conversationId}?returnCurrentStepOnly=false`);
    const stored: string[] = conversation.json.conversationOutputs.flatMap((output: { input?: string }) =>
      output.input === undefined ? [] : [output.input],
    );
    assert.deepEqual(stored, acknowledged, 'exactly the acknowledged turns are stored, in order');

    assert.equal(await service.stop(), 0, service.output());
    const db = new DatabaseSync(join(folder, 'svc.db'));
    try {
      assert.deepEqual({ ...db.prepare('PRAGMA integrity_check').get() }, { integrity_check: 'ok' });
      const { steps } = db
        .prepare('SELECT count(*) AS steps FROM conversation_steps WHERE conversation_id = ?')
        .get(conversationId) as { steps: number };
      assert.equal(steps, acknowledged.length + 1, 'the start step and the acknowledged turns, nothing else');
    } finally {
      db.close();
    }
  });
});
