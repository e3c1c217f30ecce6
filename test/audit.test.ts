import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { Registry } from 'prom-client';
import { AuditLedger } from '../src/ops/audit.ts';
import type { AuditDraft, AuditEntry } from '../src/ops/audit-entry.ts';
import { summarize } from '../src/ops/audit-entry.ts';
import { blockDocument, entriesOfBlock } from '../src/ops/audit-block.ts';
import type { AuditBlock, AuditBlockRange, AuditStore } from '../src/storage/audit-ports.ts';
import { createResource, deployAgent, sendMessage, startConversation } from './support/agents.ts';
import { client } from './support/http.ts';
import { createTestDatabase } from './support/postgres.ts';
import { serverOfBlock, startTestServer, storeTypes, type StoreType, type TestServer } from './support/server.ts';

/**
 * The audit ledger (SPEC Events 2, BEHAVIOUR §17): one signed, chained entry per executed task per turn,
 * write-once in both stores, read and verified through `/auditstore`; tampering is detected; secrets never appear.
 */

const MASTER_KEY = 'audit test master key 7c1d0e';
const API_TOKEN = 'tok-audit-5e4d3c2b1a-secret';
const TYPED_SECRET = 'typed-secret-value-0a9b8c7d';

// --- unit: the write path -----------------------------------------------------------------------------------------

class MemoryAuditStore implements AuditStore {
  readonly rows: AuditBlock[] = [];
  failures = 0;
  attempts = 0;

  async append(blocks: readonly AuditBlock[]): Promise<void> {
    this.attempts++;
    if (this.failures > 0) {
      this.failures--;
      throw new Error('store unavailable');
    }
    for (const block of blocks)
      if (!this.rows.some((stored) => stored.firstId === block.firstId)) this.rows.push(block);
  }

  #of(conversationId: string): AuditBlock[] {
    return this.rows
      .filter((row) => row.conversationId === conversationId)
      .sort((a, b) => a.firstSequence - b.firstSequence || a.firstId.localeCompare(b.firstId));
  }

  async blocks(conversationId: string, skip: number, limit: number): Promise<AuditBlockRange> {
    const documents: string[] = [];
    let before = 0;
    let skipInFirst = 0;
    for (const block of this.#of(conversationId)) {
      if (before + block.entryCount > skip && before < skip + limit) {
        if (documents.length === 0) skipInFirst = skip - before;
        documents.push(block.document);
      }
      before += block.entryCount;
    }
    return { documents, skipInFirst };
  }

  async count(conversationId: string): Promise<number> {
    return this.#of(conversationId).reduce((sum, block) => sum + block.entryCount, 0);
  }

  async latest(conversationId: string): Promise<string | undefined> {
    return this.#of(conversationId).at(-1)?.document;
  }

  /** The sequences of the stored entries, in the order their blocks were written. */
  get sequences(): number[] {
    return this.rows.flatMap((block) => Array.from({ length: block.entryCount }, (_, i) => block.firstSequence + i));
  }
}

let draftCounter = 0;
function draft(conversationId: string, sequence: number, output: Record<string, unknown> = {}): AuditDraft {
  draftCounter++;
  return {
    id: `${String(draftCounter).padStart(12, '0')}aaaaaaaaaaaa`,
    conversationId,
    agentId: 'agent',
    agentVersion: 1,
    userId: 'user',
    environment: 'production',
    stepIndex: 0,
    workflowId: 'wf',
    taskId: 'wf:0',
    taskType: 'ai.svc.output',
    taskIndex: 0,
    durationMs: 1.5,
    actions: ['a'],
    input: {},
    output,
    llmDetail: null,
    outcome: 'ok',
    error: null,
    timestamp: new Date(0).toISOString(),
    sequence,
  };
}

async function counterValue(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value ?? 0;
}

describe('audit ledger write path', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-audit-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const ledgerOver = (store: AuditStore, extra: Partial<ConstructorParameters<typeof AuditLedger>[0]> = {}) => {
    const registry = new Registry();
    const ledger = new AuditLedger({
      store,
      masterKey: MASTER_KEY,
      kdfIterations: 1000,
      maxQueueSize: 100,
      deadLetterPath: join(dir, 'dead', `${Math.random()}.jsonl`),
      registry,
      writeRetry: { maxAttempts: 4, backoff: { initialDelayMs: 1, multiplier: 2, maxDelayMs: 4 } },
      ...extra,
    });
    return { ledger, registry };
  };

  it('a failing flush is retried three times, then the batch goes to the dead-letter file and is counted', async () => {
    const store = new MemoryAuditStore();
    store.failures = 4;
    const deadLetterPath = join(dir, 'nested', 'dead-letter.jsonl');
    const { ledger, registry } = ledgerOver(store, { deadLetterPath });
    ledger.enqueue([draft('c1', 1)]);
    ledger.enqueue([draft('c1', 2)]);
    await ledger.flush();
    assert.equal(store.attempts, 4, 'one attempt and three retries');
    assert.equal(store.rows.length, 0);
    const lines = (await readFile(deadLetterPath, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((entry) => entry.sequence),
      [1, 2],
    );
    assert.match(lines[0].hmac, /^v1:[0-9a-f]{64}$/, 'dead-lettered entries keep their signature');
    assert.equal(await counterValue(registry, 'svc_audit_entries_dead_lettered_total'), 2);

    // The store is back: later entries are written, chained across the undelivered ones.
    ledger.enqueue([draft('c1', 3)]);
    await ledger.flush();
    assert.deepEqual(store.sequences, [3]);
    const report = await ledger.verify('c1');
    assert.deepEqual(report.undeliveredSequences, [1, 2]);
    assert.deepEqual(report.missingSequences, []);
    assert.equal(report.tamperingSuspected, false);
    await ledger.close();
  });

  it('a flush that fails once succeeds on the retry and writes each entry once', async () => {
    const store = new MemoryAuditStore();
    store.failures = 1;
    const { ledger, registry } = ledgerOver(store);
    for (let sequence = 1; sequence <= 3; sequence++) ledger.enqueue([draft('c2', sequence)]);
    await ledger.flush();
    assert.equal(store.attempts, 2);
    assert.deepEqual(store.sequences, [1, 2, 3]);
    assert.equal(await counterValue(registry, 'svc_audit_entries_dead_lettered_total'), 0);
    const report = await ledger.verify('c2');
    assert.equal(report.intact, true);
    assert.equal(report.valid, 3);
  });

  it("a turn's entries are one block, stored once: each entry signed, chained and read back as it was drafted", async () => {
    const store = new MemoryAuditStore();
    const { ledger } = ledgerOver(store);
    const turn = (first: number) =>
      Array.from({ length: 4 }, (_, offset) => draft('c6', first + offset, { [`task${offset}`]: [first, offset] }));
    const drafts = [...turn(1), ...turn(5)];
    ledger.enqueue(drafts.slice(0, 4));
    ledger.enqueue(drafts.slice(4));
    await ledger.flush();
    assert.deepEqual(
      store.rows.map((block) => [block.firstSequence, block.entryCount, JSON.parse(block.document).deltas.length]),
      [
        [1, 4, 4],
        [5, 4, 4],
      ],
    );
    const entries = await ledger.list('c6', 0, 100);
    assert.deepEqual(
      entries.map(({ previousHmac: _, hmac: __, ...drafted }) => drafted),
      JSON.parse(JSON.stringify(drafts)),
    );
    for (const [index, entry] of entries.entries()) {
      assert.match(entry.hmac!, /^v1:[0-9a-f]{64}$/);
      assert.equal(entry.previousHmac, entries[index - 1]?.hmac ?? null);
    }
    assert.deepEqual(
      (await ledger.list('c6', 3, 3)).map((entry) => entry.sequence),
      [4, 5, 6],
    );
    assert.equal(await ledger.count('c6'), 8);
    const report = await ledger.verify('c6');
    assert.equal(report.valid, 8);
    assert.equal(report.intact, true);
  });

  it('of a block the queue has not room enough for, the entries beyond its bound are dropped and counted', async () => {
    const store = new MemoryAuditStore();
    const { ledger, registry } = ledgerOver(store, { maxQueueSize: 6 });
    const block = (first: number) => Array.from({ length: 4 }, (_, offset) => draft('c7', first + offset));
    ledger.enqueue(block(1));
    ledger.enqueue(block(5));
    assert.equal(ledger.queued, 6);
    assert.equal(await counterValue(registry, 'svc_audit_entries_dropped_total'), 2);
    await ledger.flush();
    ledger.enqueue(block(9));
    await ledger.flush();
    const report = await ledger.verify('c7');
    assert.deepEqual(report.undeliveredSequences, [7, 8]);
    assert.equal(report.valid, 10);
    assert.equal(report.tamperingSuspected, false);
  });

  it('overflow drops and counts; the chain bridges the dropped entries (undelivered, not tampering)', async () => {
    const store = new MemoryAuditStore();
    const { ledger, registry } = ledgerOver(store, { maxQueueSize: 2 });
    for (let sequence = 1; sequence <= 5; sequence++) ledger.enqueue([draft('c3', sequence)]);
    assert.equal(ledger.queued, 2);
    assert.equal(await counterValue(registry, 'svc_audit_entries_dropped_total'), 3);
    await ledger.flush();
    ledger.enqueue([draft('c3', 6)]);
    await ledger.flush();
    const report = await ledger.verify('c3');
    assert.deepEqual(report.undeliveredSequences, [3, 4, 5]);
    assert.equal(report.valid, 3);
    assert.equal(report.tamperingSuspected, false);
    assert.equal(report.intact, false, 'entries are missing from the ledger');
  });

  it('an entry whose predecessor another instance has not written yet waits for it', async () => {
    const store = new MemoryAuditStore();
    const first = ledgerOver(store).ledger;
    const second = ledgerOver(store).ledger;
    first.enqueue([draft('c4', 1)]);
    second.enqueue([draft('c4', 2)]);
    await second.flush();
    assert.equal(store.rows.length, 0, 'held back for sequence 1');
    await first.flush();
    await second.flush();
    assert.deepEqual(store.sequences, [1, 2]);
    assert.equal((await first.verify('c4')).intact, true);
  });

  it('once started, queued entries are written without waiting for an explicit flush', async () => {
    const store = new MemoryAuditStore();
    const { ledger } = ledgerOver(store);
    ledger.enqueue([draft('c4a', 1)]);
    await setTimeout(50);
    assert.equal(store.rows.length, 0, 'not started: only flush writes');
    ledger.start();
    ledger.enqueue([draft('c4a', 2)]);
    while (store.rows.length < 2) await setTimeout(5);
    assert.deepEqual(store.sequences, [1, 2]);
    await ledger.close();
  });

  it('a predecessor another instance has not written is waited for five seconds, however often it flushes', async () => {
    const store = new MemoryAuditStore();
    let now = 1_000_000;
    const { ledger } = ledgerOver(store, { clock: () => now });
    ledger.enqueue([draft('c4b', 2)]);
    for (let flushes = 0; flushes < 10; flushes++) await ledger.flush();
    assert.equal(store.rows.length, 0, 'still waiting for sequence 1');
    now += 4_999;
    await ledger.flush();
    assert.equal(store.rows.length, 0, 'still waiting for sequence 1');
    now += 2;
    await ledger.flush();
    assert.deepEqual(store.sequences, [2]);
  });

  it('signing a large flush gives the event loop back between slices, and keeps each chain in order', async () => {
    let loopTurns = 0;
    let turnsBeforeFirstAppend: number | undefined;
    class RecordingStore extends MemoryAuditStore {
      override async append(rows: readonly AuditBlock[]): Promise<void> {
        turnsBeforeFirstAppend ??= loopTurns;
        await super.append(rows);
      }
    }
    const store = new RecordingStore();
    const { ledger } = ledgerOver(store, { maxQueueSize: 10_000 });
    assert.equal(await ledger.signingEnabled, true); // the key is derived: from here on, signing is all there is
    // Signing a thousand entries takes well over the 1 ms slice on any machine.
    for (let sequence = 1; sequence <= 100; sequence++)
      for (let conversation = 0; conversation < 10; conversation++)
        ledger.enqueue([draft(`c${conversation}`, sequence)]);
    let flushing = true;
    const count = () => {
      loopTurns++;
      if (flushing) setImmediate(count);
    };
    setImmediate(count);
    await ledger.flush();
    flushing = false;
    assert.ok(turnsBeforeFirstAppend! > 0, 'the event loop did not run while the batch was signed');
    for (let conversation = 0; conversation < 10; conversation++) {
      const verification = await ledger.verify(`c${conversation}`);
      assert.equal(verification.valid, 100);
      assert.equal(verification.intact, true);
    }
  });

  it('without a master key entries are unsigned and verification says so', async () => {
    const store = new MemoryAuditStore();
    const { ledger } = ledgerOver(store, { masterKey: undefined });
    ledger.enqueue([draft('c5', 1)]);
    ledger.enqueue([draft('c5', 2)]);
    await ledger.flush();
    const [entry] = await ledger.list('c5', 0, 10);
    assert.equal(entry!.hmac, null);
    const report = await ledger.verify('c5');
    assert.equal(report.signingEnabled, false);
    assert.equal(report.intact, false);
    assert.equal(report.tamperingSuspected, false);
    assert.equal(report.entriesChecked, 2);
  });

  it('summaries are bounded and mask credential-like values', () => {
    const summary = summarize({
      headers: { Authorization: 'Bearer abcdefghijklmnopqrstuvwxyz', 'X-Api-Key': '${vault:key}' },
      text: 'x'.repeat(5000),
      note: 'use sk-abcdefghijklmnopqrstuvwxyz012345 please',
      list: Array.from({ length: 100 }, (_, i) => i),
    }) as Record<string, any>;
    assert.equal(summary.headers.Authorization, '<REDACTED>');
    assert.equal(summary.headers['X-Api-Key'], '${vault:key}');
    assert.ok(summary.text.length < 260);
    assert.equal(summary.note, 'use sk-<REDACTED> please');
    assert.equal(summary.list.length, 21);
  });
});

// --- black box: both stores ---------------------------------------------------------------------------------------

/** A loopback API the agent calls with a vault-resolved header; it records the headers it received. */
class Target {
  readonly authorizations: string[] = [];
  readonly #server: Server = createServer((request, response) => {
    this.authorizations.push(String(request.headers.authorization));
    request.resume();
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ temperature: 21, echoed: request.headers['x-plain'] }));
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const ACTIONS = ['greet', 'keep', 'call'];
const rules = {
  behaviorGroups: [
    {
      name: 'By context',
      behaviorRules: ACTIONS.map((action) => ({
        name: action,
        actions: [action],
        conditions: [{ type: 'contextmatcher', configs: { contextKey: 'do', contextType: 'string', string: action } }],
      })),
    },
  ],
};
const properties = {
  setOnActions: [
    { actions: ['keep'], setProperties: [{ name: 'apiKey', fromObjectPath: 'memory.current.input', scope: 'secret' }] },
  ],
};
const text = (value: string) => ({ valueAlternatives: [{ type: 'text', text: value }] });
const outputs = {
  outputSet: [
    { action: 'CONVERSATION_START', timesOccurred: 0, outputs: [text('Welcome!')] },
    { action: 'greet', timesOccurred: 0, outputs: [text('Hi there!')] },
    { action: 'keep', timesOccurred: 0, outputs: [text('Kept.')] },
    { action: 'call', timesOccurred: 0, outputs: [text('Called.')] },
  ],
};
const TASKS = ['ai.svc.behavior', 'ai.svc.property', 'ai.svc.httpcalls', 'ai.svc.output'];

async function buildAgent(api: ReturnType<typeof client>, targetUrl: string): Promise<string> {
  const create = (path: string, body: unknown) => createResource(api, path, body);
  const calls = {
    targetServerUrl: targetUrl,
    httpCalls: [
      {
        name: 'weather',
        actions: ['call'],
        saveResponse: true,
        responseObjectName: 'weather',
        request: {
          method: 'POST',
          path: '/weather',
          headers: { Authorization: 'Bearer ${vault:apiToken}', 'X-Plain': 'p-${vault:apiToken}' },
          body: 'hello',
        },
      },
    ],
  };
  return deployAgent(api, {
    extensions: [
      { type: 'svc://ai.svc.behavior', config: { uri: await create('/behaviorstore/behaviorsets', rules) } },
      {
        type: 'svc://ai.svc.property',
        config: { uri: await create('/propertysetterstore/propertysetters', properties) },
      },
      { type: 'svc://ai.svc.httpcalls', config: { uri: await create('/httpcallsstore/httpcalls', calls) } },
      { type: 'svc://ai.svc.output', config: { uri: await create('/outputstore/outputsets', outputs) } },
    ],
  });
}

/** Direct SQL on the server's database, beside the service (as an operator with database access would). */
interface Database {
  exec(sql: string): Promise<void>;
  /** `sql` with `$1`, `$2`, … for its parameters. */
  query(sql: string, parameters: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function openDatabase(store: StoreType, location: string): Promise<Database> {
  if (store === 'sqlite') {
    const db = new DatabaseSync(location);
    db.exec('PRAGMA busy_timeout = 5000');
    return {
      exec: async (sql) => void db.exec(sql),
      query: async (sql, parameters) =>
        db.prepare(sql.replaceAll(/\$(\d+)/g, '?$1')).all(...(parameters as (string | number)[])),
      close: async () => db.close(),
    };
  }
  const connection = new pg.Client({ connectionString: location });
  await connection.connect();
  return {
    exec: async (sql) => void (await connection.query(sql)),
    query: async (sql, parameters) => (await connection.query(sql, parameters)).rows,
    close: () => connection.end(),
  };
}

/**
 * Changes a conversation's stored entries behind the service, block by block (`change` answers a block's entries as
 * they are to be stored); tampering takes deliberate DDL: the write-once triggers are switched off meanwhile.
 */
async function tamper(
  store: StoreType,
  db: Database,
  conversationId: string,
  change: (entries: AuditEntry[]) => AuditEntry[],
): Promise<void> {
  if (store === 'sqlite') await db.exec('DROP TRIGGER audit_blocks_no_update; DROP TRIGGER audit_blocks_no_delete;');
  else await db.exec('ALTER TABLE audit_blocks DISABLE TRIGGER audit_blocks_write_once');
  const blocks = await db.query('SELECT first_id, documents FROM audit_blocks WHERE conversation_id = $1', [
    conversationId,
  ]);
  for (const block of blocks) {
    const entries = entriesOfBlock(String(block.documents)) as AuditEntry[];
    const changed = change(entries);
    if (JSON.stringify(changed) === JSON.stringify(entries)) continue;
    await db.query('UPDATE audit_blocks SET documents = $1, entry_count = $2 WHERE first_id = $3', [
      blockDocument(changed),
      changed.length,
      block.first_id,
    ]);
  }
  if (store === 'sqlite')
    await db.exec(`CREATE TRIGGER audit_blocks_no_update BEFORE UPDATE ON audit_blocks
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: UPDATE refused'); END;
      CREATE TRIGGER audit_blocks_no_delete BEFORE DELETE ON audit_blocks
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: DELETE refused'); END;`);
  else await db.exec('ALTER TABLE audit_blocks ENABLE TRIGGER audit_blocks_write_once');
}

for (const storeType of storeTypes) {
  describe(`audit ledger on ${storeType}`, () => {
    const target = new Target();
    let server: TestServer;
    let location: string;
    let cleanUp: () => Promise<void>;
    const api = client(() => server.url);
    let agentId: string;

    before(async () => {
      await target.start();
      const dir = await mkdtemp(join(tmpdir(), 'svc-audit-'));
      let storeOverride: Record<string, string>;
      if (storeType === 'sqlite') {
        location = join(dir, 'svc.db');
        storeOverride = { 'svc.datastore.sqlite.path': location };
        cleanUp = () => rm(dir, { recursive: true, force: true });
      } else {
        const database = await createTestDatabase();
        location = database.url;
        storeOverride = { 'svc.datastore.postgres.url': location };
        cleanUp = async () => {
          await database.drop();
          await rm(dir, { recursive: true, force: true });
        };
      }
      server = await startTestServer(storeType, {
        'svc.vault.master-key': MASTER_KEY,
        'svc.audit.dead-letter-path': join(dir, 'dead.jsonl'),
        ...storeOverride,
      });
      const stored = await api.put('/secretstore/secrets/default/apiToken', { json: { value: API_TOKEN } });
      assert.ok([200, 201].includes(stored.status), stored.text);
      agentId = await buildAgent(api, target.url);
    });
    after(async () => {
      await server?.dispose();
      await cleanUp?.();
      await target.stop();
    });

    const start = async () => (await startConversation(api, agentId)).conversationId as string;
    const say = (conversationId: string, action: string, input = 'hello') =>
      sendMessage(api, conversationId, input, { context: { do: { type: 'string', value: action } } });
    const entriesOf = async (conversationId: string) => {
      await server.server.audit.flush();
      const answer = await api.get(`/auditstore/${conversationId}?limit=1000`);
      assert.equal(answer.status, 200, answer.text);
      return answer.json as any[];
    };
    const verify = async (conversationId: string) => {
      const answer = await api.get(`/auditstore/verify/${conversationId}`);
      assert.equal(answer.status, 200, answer.text);
      return answer.json;
    };

    it('records one entry per task per turn, in sequence, and the chain verifies', async () => {
      const conversationId = await start();
      await say(conversationId, 'greet');
      await say(conversationId, 'call');
      const entries = await entriesOf(conversationId);
      assert.equal(entries.length, 3 * TASKS.length);
      assert.deepEqual(
        entries.map((entry) => entry.sequence),
        entries.map((_, i) => i + 1),
      );
      assert.deepEqual(
        entries.map((entry) => entry.stepIndex),
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
      );
      assert.deepEqual(
        entries.map((entry) => entry.taskType),
        [...TASKS, ...TASKS, ...TASKS],
      );
      assert.deepEqual(
        entries.map((entry) => entry.taskIndex),
        [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3],
      );
      const [first] = entries;
      assert.equal(first.conversationId, conversationId);
      assert.equal(first.agentId, agentId);
      assert.equal(first.agentVersion, 1);
      assert.equal(first.environment, 'production');
      assert.equal(first.outcome, 'ok');
      assert.match(first.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(first.previousHmac, null);
      assert.match(first.hmac, /^v1:[0-9a-f]{64}$/);
      assert.equal(entries[1].previousHmac, first.hmac);
      assert.deepEqual(entries[4].actions, ['greet'], 'the behavior task of step 1 set the action');
      assert.deepEqual(
        Object.keys(entries[4].output),
        ['behavior_rules:success', 'behavior_rules:fail', 'actions'].filter((key) => key in entries[4].output),
      );
      assert.ok('httpCalls:weather' in entries[10].output, 'the HTTP-call task wrote its response');

      const count = await api.get(`/auditstore/${conversationId}/count`);
      assert.equal(count.status, 200);
      assert.equal(count.json, 12);
      const page = await api.get(`/auditstore/${conversationId}?skip=10&limit=5`);
      assert.deepEqual(
        page.json.map((entry: any) => entry.sequence),
        [11, 12],
      );

      const report = await verify(conversationId);
      assert.equal(report.signingEnabled, true);
      assert.equal(report.entriesChecked, 12);
      assert.equal(report.valid, 12);
      assert.equal(report.invalid, 0);
      assert.equal(report.intact, true);
      assert.equal(report.tamperingSuspected, false);
      assert.deepEqual(report.missingSequences, []);
      assert.deepEqual(report.duplicateSequences, []);
      assert.deepEqual(report.problems, []);
    });

    it('an unknown conversation has no entries', async () => {
      const answer = await api.get('/auditstore/0123456789abcdef01234567');
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.json, []);
      assert.equal((await api.get('/auditstore/0123456789abcdef01234567/count')).json, 0);
      const report = await verify('0123456789abcdef01234567');
      assert.equal(report.entriesChecked, 0);
      assert.equal(report.tamperingSuspected, false);
      const bad = await api.get('/auditstore/x?limit=0');
      assert.equal(bad.status, 400);
    });

    it('no secret value reaches an entry: vault-resolved headers and a secret-scoped property', async () => {
      const conversationId = await start();
      await say(conversationId, 'call');
      await say(conversationId, 'keep', TYPED_SECRET);
      assert.equal(target.authorizations.at(-1), `Bearer ${API_TOKEN}`, 'the call did carry the secret');
      const entries = await entriesOf(conversationId);
      assert.equal(entries.length, 3 * TASKS.length);
      const all = JSON.stringify(entries);
      assert.ok(!all.includes(API_TOKEN), 'no vault-resolved value');
      assert.ok(!all.includes(TYPED_SECRET), 'no secret-scoped property value');
      assert.ok(!all.includes(MASTER_KEY));
      const request = entries[6].output['httpCalls:weatherRequest'];
      assert.equal(request.headers.Authorization, '<REDACTED>');
      const kept = entries.find((entry) => entry.stepIndex === 2 && entry.taskType === 'ai.svc.property');
      assert.deepEqual(kept.output['properties:apiKey'], [
        { name: 'apiKey', value: `\${vault:${agentId}.apiKey}`, scope: 'conversation' },
      ]);
      assert.equal(kept.input.userInput, '<REDACTED>');
    });

    it('the table is write-once: UPDATE and DELETE through SQL fail', async () => {
      const conversationId = await start();
      await entriesOf(conversationId);
      const db = await openDatabase(storeType, location);
      try {
        await assert.rejects(
          db.exec(`UPDATE audit_blocks SET documents = '{}' WHERE conversation_id = '${conversationId}'`),
          /write-once/,
        );
        await assert.rejects(
          db.exec(`DELETE FROM audit_blocks WHERE conversation_id = '${conversationId}'`),
          /write-once/,
        );
      } finally {
        await db.close();
      }
      assert.equal((await verify(conversationId)).intact, true);
    });

    it('an entry changed or deleted behind the service is detected', async () => {
      const changed = await start();
      await say(changed, 'greet');
      const deleted = await start();
      await say(deleted, 'greet');
      const changedEntries = await entriesOf(changed);
      const deletedEntries = await entriesOf(deleted);
      const victim = changedEntries[5]!;
      const removed = deletedEntries[2]!;

      const db = await openDatabase(storeType, location);
      try {
        // The victim is the second entry of its turn: stored as what it changes from the entry before it.
        await tamper(storeType, db, changed, (entries) =>
          entries.map((entry) => (entry.id === victim.id ? { ...entry, durationMs: entry.durationMs + 1000 } : entry)),
        );
        await tamper(storeType, db, deleted, (entries) => entries.filter((entry) => entry.id !== removed.id));
      } finally {
        await db.close();
      }

      const changedReport = await verify(changed);
      assert.equal(changedReport.tamperingSuspected, true);
      assert.equal(changedReport.intact, false);
      assert.equal(changedReport.invalid, 1);
      assert.deepEqual(changedReport.problems, [{ entryId: victim.id, sequence: victim.sequence, status: 'tampered' }]);

      const deletedReport = await verify(deleted);
      assert.equal(deletedReport.tamperingSuspected, true);
      assert.deepEqual(deletedReport.missingSequences, [removed.sequence]);
      assert.deepEqual(deletedReport.problems, [
        { entryId: deletedEntries[3].id, sequence: removed.sequence + 1, status: 'chain-broken' },
      ]);
    });

    it('a turn whose commit fails leaves no entry, and the sequence goes on without a gap', async () => {
      const conversationId = await start();
      await say(conversationId, 'greet');
      const committed = await entriesOf(conversationId);
      const db = await openDatabase(storeType, location);
      try {
        // The store refuses the turn's write (as a full disk or a lost connection would).
        if (storeType === 'sqlite') {
          await db.exec(`CREATE TRIGGER refuse_commit BEFORE UPDATE ON conversations WHEN OLD.id = '${conversationId}'
            BEGIN SELECT RAISE(ABORT, 'commit refused'); END;`);
        } else {
          await db.exec(`CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'commit refused'; END $$;
            CREATE TRIGGER refuse_commit BEFORE UPDATE ON conversations FOR EACH ROW WHEN (OLD.id = '${conversationId}')
            EXECUTE FUNCTION refuse_commit();`);
        }
        const refused = await api.post(`/agents/${conversationId}`, {
          json: { input: 'hello', context: { do: { type: 'string', value: 'call' } } },
        });
        assert.ok(refused.status >= 500, `${refused.status} ${refused.text}`);
        assert.deepEqual(
          (await entriesOf(conversationId)).map((entry) => entry.id),
          committed.map((entry) => entry.id),
        );
      } finally {
        await db.exec(
          storeType === 'sqlite'
            ? 'DROP TRIGGER refuse_commit'
            : 'DROP TRIGGER refuse_commit ON conversations; DROP FUNCTION refuse_commit()',
        );
        await db.close();
      }
      await say(conversationId, 'greet');
      const entries = await entriesOf(conversationId);
      assert.deepEqual(
        entries.map((entry) => entry.sequence),
        entries.map((_, i) => i + 1),
      );
      assert.deepEqual(
        entries.map((entry) => entry.stepIndex),
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
      );
      assert.equal((await verify(conversationId)).intact, true);
    });

    it('the sequence goes on across an undo and a restart (no number used twice)', async () => {
      const conversationId = await start();
      await say(conversationId, 'greet');
      assert.equal((await api.post(`/agents/${conversationId}/undo`)).status, 200);
      await say(conversationId, 'greet');
      await server.restart();
      await say(conversationId, 'greet');
      const entries = await entriesOf(conversationId);
      assert.deepEqual(
        entries.map((entry) => entry.sequence),
        entries.map((_, i) => i + 1),
      );
      assert.deepEqual(
        entries.map((entry) => entry.stepIndex),
        [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2],
      );
      assert.equal((await verify(conversationId)).intact, true);
    });
  });
}

describe('audit queue overflow through the service', () => {
  const block = serverOfBlock('sqlite', { 'svc.audit.max-queue-size': 2 });
  const { api } = block;

  it('drops entries beyond the queue bound and counts them in svc_audit_entries_dropped_total', async () => {
    const create = (path: string, body: unknown) => createResource(api, path, body);
    const agentId = await deployAgent(api, {
      extensions: [
        { type: 'svc://ai.svc.behavior', config: { uri: await create('/behaviorstore/behaviorsets', rules) } },
        {
          type: 'svc://ai.svc.property',
          config: { uri: await create('/propertysetterstore/propertysetters', { setOnActions: [] }) },
        },
        { type: 'svc://ai.svc.output', config: { uri: await create('/outputstore/outputsets', outputs) } },
      ],
    });
    const conversationId = (await startConversation(api, agentId)).conversationId as string;

    const metrics = await api.get('/q/metrics');
    const dropped = /^svc_audit_entries_dropped_total (\d+)/m.exec(metrics.text);
    assert.ok(dropped, metrics.text.slice(0, 500));
    assert.equal(Number(dropped[1]), 1, 'three tasks ran, the queue holds two');

    await block.server.server.audit.flush();
    const report = (await api.get(`/auditstore/verify/${conversationId}`)).json;
    assert.equal(report.signingEnabled, false, 'no master key: unsigned');
    assert.equal(report.entriesChecked, 2);
  });
});
