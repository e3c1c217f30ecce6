/**
 * The runtime storage contract (conversations, user properties, deployments, triggers): one suite, run
 * against every adapter. Each test uses its own ids, so the tests share one database per adapter.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Storage } from '../src/storage/ports.ts';
import type { ConversationRow, ConversationStateName, ConversationStore } from '../src/storage/runtime-ports.ts';
import { withStepStrings } from '../src/storage/runtime-rows.ts';
import { storageTargets, useStorage, type StorageTarget } from './support/storage-targets.ts';

let sequence = 0;
/** A unique 24-hex-character id per call. */
const uniqueId = () => `${Date.now().toString(16).padStart(12, '0')}${(++sequence).toString(16).padStart(12, '0')}`;
/** A unique name (agent id, user id, intent) per call. */
const uniqueName = (prefix: string) => `${prefix}-${++sequence}-${Math.random().toString(36).slice(2, 8)}`;

function header(id: string, overrides: Partial<ConversationRow> = {}): ConversationRow {
  return {
    id,
    agentId: 'agent-1',
    agentVersion: 1,
    userId: 'user-1',
    environment: 'production',
    state: 'READY',
    createdOn: 1_000,
    lastModifiedOn: 1_000,
    stepCount: 1,
    revision: 1,
    stateJson: '{}',
    ...overrides,
  };
}

/** The header after a change: next revision, given step count, plus overrides. */
function next(row: ConversationRow, stepCount: number, overrides: Partial<ConversationRow> = {}): ConversationRow {
  return { ...row, revision: row.revision + 1, stepCount, lastModifiedOn: row.lastModifiedOn + 1, ...overrides };
}

const step = (n: number) => `{"step":${n}}`;

/** The store, its loads answering the steps' texts as strings (a store may read them as bytes). */
function readingStrings(store: ConversationStore): ConversationStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'load') return async (id: string) => withStepStrings(await target.load(id));
      if (property === 'loadFrom')
        return async (id: string, fromIndex: number) => withStepStrings(await target.loadFrom(id, fromIndex));
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function contract(name: string, setup: () => Promise<StorageTarget>): void {
  describe(`runtime storage contract: ${name}`, () => {
    const { storage, reopen, target } = useStorage(setup);
    const conversations = () => readingStrings(storage().conversations);

    test('create then load returns header and steps byte-identical', async () => {
      const id = uniqueId();
      const steps = [
        '{"z":1,  "a":"h\u00e9llo \u2713 \ud83d\ude00 \u65e5\u672c \\u0000","n":[1,2.50,{"b":null}]}',
        '{"quote":"\\"x\\" \'y\' \\\\ {}", "comma":",", "braces":"{a,b}", "null":"NULL"}',
        '',
      ];
      const row = header(id, {
        agentId: 'agent-\u00fc',
        agentVersion: 7,
        userId: 'user "quoted"',
        environment: 'test',
        state: 'IN_PROGRESS',
        createdOn: 1_700_000_000_123,
        lastModifiedOn: 1_700_000_000_456,
        stepCount: 3,
        revision: 1,
        stateJson: '{"properties":{"k":"v \u00e4"},  "redo":[]}',
      });
      await conversations().create(row, steps);
      assert.deepEqual(await conversations().load(id), { row, steps });
      assert.deepEqual(await conversations().loadRow(id), row);
    });

    test('unknown conversations: undefined / not-found / false', async () => {
      const id = uniqueId();
      assert.equal(await conversations().load(id), undefined);
      assert.equal(await conversations().loadRow(id), undefined);
      assert.equal(
        await conversations().commit(id, 1, { row: header(id, { revision: 2, stepCount: 1 }), appendSteps: ['{}'] }),
        'not-found',
      );
      assert.equal(await conversations().delete(id), false);
      assert.equal(await conversations().load(id), undefined, 'a not-found commit creates nothing');
    });

    test('commit appends at stepCount - appended ... and replaces the header', async () => {
      const id = uniqueId();
      const first = header(id, { stepCount: 1 });
      await conversations().create(first, [step(0)]);
      const second = next(first, 3, { state: 'IN_PROGRESS', stateJson: '{"p":1}' });
      assert.equal(await conversations().commit(id, 1, { row: second, appendSteps: [step(1), step(2)] }), 'committed');
      const third = next(second, 4, { state: 'ENDED', stateJson: '{"p":2}' });
      assert.equal(await conversations().commit(id, 2, { row: third, appendSteps: [step(3)] }), 'committed');
      assert.deepEqual(await conversations().load(id), { row: third, steps: [step(0), step(1), step(2), step(3)] });
      // A header-only commit (no steps) also counts as a write.
      const fourth = next(third, 4, { stateJson: '{"p":3}' });
      assert.equal(await conversations().commit(id, 3, { row: fourth, appendSteps: [] }), 'committed');
      assert.deepEqual(await conversations().load(id), { row: fourth, steps: [step(0), step(1), step(2), step(3)] });
    });

    test('truncate then append: undo followed by a new step reuses the index', async () => {
      const id = uniqueId();
      let row = header(id, { stepCount: 3 });
      await conversations().create(row, [step(0), step(1), step(2)]);
      // Undo: drop step 2 alone.
      const undone = next(row, 2, { stateJson: '{"redo":["s2"]}' });
      assert.equal(
        await conversations().commit(id, row.revision, { row: undone, truncateStepsFrom: 2, appendSteps: [] }),
        'committed',
      );
      assert.deepEqual((await conversations().load(id))?.steps, [step(0), step(1)]);
      row = undone;
      // Undo once more, then a new message: truncate from 1 and append the new step at 1, in one commit.
      const replaced = next(row, 2, { stateJson: '{"redo":[]}' });
      assert.equal(
        await conversations().commit(id, row.revision, {
          row: replaced,
          truncateStepsFrom: 1,
          appendSteps: ['{"new":1}'],
        }),
        'committed',
      );
      assert.deepEqual(await conversations().load(id), { row: replaced, steps: [step(0), '{"new":1}'] });
      // Truncation past the end removes nothing.
      const appended = next(replaced, 3);
      assert.equal(
        await conversations().commit(id, replaced.revision, {
          row: appended,
          truncateStepsFrom: 9,
          appendSteps: [step(2)],
        }),
        'committed',
      );
      assert.deepEqual((await conversations().load(id))?.steps, [step(0), '{"new":1}', step(2)]);
    });

    test('loadFrom returns the header and only the steps from an index on', async () => {
      const id = uniqueId();
      const row = header(id, { stepCount: 3 });
      await conversations().create(row, [step(0), step(1), step(2)]);
      assert.deepEqual(await conversations().loadFrom(id, 1), { row, steps: [step(1), step(2)] });
      assert.deepEqual(await conversations().loadFrom(id, 3), { row, steps: [] });
      assert.equal(await conversations().loadFrom(uniqueId(), 0), undefined);
    });

    test('a stale revision is a conflict and writes nothing', async () => {
      const id = uniqueId();
      const row = header(id);
      await conversations().create(row, [step(0)]);
      const winner = next(row, 2);
      assert.equal(await conversations().commit(id, 1, { row: winner, appendSteps: [step(1)] }), 'committed');
      assert.equal(
        await conversations().commit(id, 1, { row: next(row, 2, { state: 'ERROR' }), appendSteps: ['{"late":1}'] }),
        'conflict',
      );
      assert.equal(
        await conversations().commit(id, 1, {
          row: next(row, 1, { state: 'ERROR' }),
          truncateStepsFrom: 0,
          appendSteps: [],
        }),
        'conflict',
      );
      assert.equal(
        await conversations().commit(id, 5, { row: header(id, { revision: 6, stepCount: 3 }), appendSteps: ['{}'] }),
        'conflict',
      );
      assert.deepEqual(await conversations().load(id), { row: winner, steps: [step(0), step(1)] });
    });

    test('a commit that breaks the contract is refused before touching the store', async () => {
      const id = uniqueId();
      const row = header(id);
      await conversations().create(row, [step(0)]);
      await assert.rejects(
        conversations().commit(id, 1, { row: { ...row, revision: 3, stepCount: 2 }, appendSteps: ['{}'] }),
        /revision/,
      );
      await assert.rejects(
        conversations().commit(id, 1, { row: next(row, 2, { id: uniqueId() }), appendSteps: ['{}'] }),
        /header/,
      );
      await assert.rejects(conversations().create(header(uniqueId(), { stepCount: 2 }), ['{}']), /stepCount/);
      assert.deepEqual(await conversations().load(id), { row, steps: [step(0)] });
    });

    test('concurrent commits naming the same revision: exactly one is committed', async () => {
      const id = uniqueId();
      const row = header(id);
      await conversations().create(row, [step(0)]);
      const outcomes = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          conversations().commit(id, 1, {
            row: next(row, 2, { stateJson: `{"writer":${n}}` }),
            appendSteps: [`{"writer":${n}}`],
          }),
        ),
      );
      assert.deepEqual([...outcomes].sort(), ['committed', 'conflict', 'conflict', 'conflict', 'conflict']);
      const winner = outcomes.indexOf('committed') + 1;
      const loaded = await conversations().load(id);
      assert.equal(loaded?.row.revision, 2);
      assert.equal(loaded?.row.stateJson, `{"writer":${winner}}`);
      assert.deepEqual(loaded?.steps, [step(0), `{"writer":${winner}}`]);
    });

    test('concurrent commits from separate store instances (connections, pools): exactly one is committed', async () => {
      const others = await Promise.all([1, 2, 3, 4].map(() => target().open()));
      try {
        const stores = [storage(), ...others];
        const id = uniqueId();
        let row = header(id);
        await conversations().create(row, [step(0)]);
        for (let round = 0; round < 3; round++) {
          const outcomes = await Promise.all(
            stores.map((instance, n) =>
              instance.conversations.commit(id, row.revision, {
                row: next(row, row.stepCount + 1, { stateJson: `{"round":${round},"writer":${n}}` }),
                truncateStepsFrom: row.stepCount,
                appendSteps: [`{"round":${round},"writer":${n}}`],
              }),
            ),
          );
          assert.equal(outcomes.filter((outcome) => outcome === 'committed').length, 1, JSON.stringify(outcomes));
          assert.equal(outcomes.filter((outcome) => outcome === 'conflict').length, stores.length - 1);
          const loaded = withStepStrings(await others[round % others.length]!.conversations.load(id));
          assert.ok(loaded);
          assert.equal(loaded.row.revision, row.revision + 1);
          assert.equal(loaded.steps.length, row.stepCount + 1);
          assert.equal(loaded.steps.at(-1), loaded.row.stateJson);
          row = loaded.row;
        }
      } finally {
        await Promise.all(others.map((other) => other.close()));
      }
    });

    test('a long conversation: 1000 stored steps, then a commit, load returns all 1001 in order', async () => {
      const id = uniqueId();
      const steps = Array.from({ length: 1000 }, (_, n) => `{"step":${n},"text":"${'x'.repeat(n % 50)}"}`);
      const row = header(id, { stepCount: 1000 });
      await conversations().create(row, steps);
      const updated = next(row, 1001);
      assert.equal(
        await conversations().commit(id, row.revision, { row: updated, appendSteps: ['{"step":1000}'] }),
        'committed',
      );
      const loaded = await conversations().load(id);
      assert.deepEqual(loaded?.row, updated);
      assert.equal(loaded?.steps.length, 1001);
      assert.deepEqual(loaded?.steps, [...steps, '{"step":1000}']);
    });

    test('list: filters, most recently modified first (id descending on ties), paged by index * limit', async () => {
      const agent = uniqueName('agent');
      const other = uniqueName('agent');
      const user = uniqueName('user');
      const ids = ['a', 'b', 'c', 'd', 'e', 'f'].map((suffix) => `${uniqueId().slice(0, 23)}${suffix}`);
      const [a, b, c, d, e, f] = ids as [string, string, string, string, string, string];
      const rows: Array<[string, Partial<ConversationRow>]> = [
        [
          a,
          {
            agentId: agent,
            agentVersion: 1,
            userId: user,
            state: 'READY',
            environment: 'production',
            lastModifiedOn: 100,
          },
        ],
        [
          b,
          {
            agentId: agent,
            agentVersion: 2,
            userId: user,
            state: 'ENDED',
            environment: 'production',
            lastModifiedOn: 300,
          },
        ],
        [
          c,
          {
            agentId: agent,
            agentVersion: 1,
            userId: 'someone',
            state: 'READY',
            environment: 'test',
            lastModifiedOn: 200,
          },
        ],
        [
          d,
          { agentId: agent, agentVersion: 1, userId: user, state: 'ERROR', environment: 'test', lastModifiedOn: 300 },
        ],
        [
          e,
          {
            agentId: agent,
            agentVersion: 2,
            userId: 'someone',
            state: 'READY',
            environment: 'production',
            lastModifiedOn: 50,
          },
        ],
        [
          f,
          {
            agentId: other,
            agentVersion: 1,
            userId: user,
            state: 'READY',
            environment: 'production',
            lastModifiedOn: 10_000,
          },
        ],
      ];
      for (const [id, overrides] of rows) await conversations().create(header(id, overrides), [step(0)]);
      const list = async (query: Partial<Parameters<Storage['conversations']['list']>[0]>) =>
        (await conversations().list({ index: 0, limit: 10, agentId: agent, ...query })).map((row) => row.id);

      assert.deepEqual(await list({}), [d, b, c, a, e]);
      assert.deepEqual(await list({ agentVersion: 1 }), [d, c, a]);
      assert.deepEqual(await list({ agentVersion: 2 }), [b, e]);
      assert.deepEqual(await list({ userId: user }), [d, b, a]);
      assert.deepEqual(await list({ state: 'READY' }), [c, a, e]);
      assert.deepEqual(await list({ environment: 'test' }), [d, c]);
      assert.deepEqual(await list({ agentVersion: 1, userId: user, state: 'READY', environment: 'production' }), [a]);
      assert.deepEqual(await list({ state: 'EXECUTION_INTERRUPTED' }), []);
      assert.deepEqual(await list({ agentId: other }), [f]);
      assert.deepEqual(await list({ agentId: undefined, userId: user }).then((found) => found.slice(0, 4)), [
        f,
        d,
        b,
        a,
      ]);
      // Paging after filtering.
      assert.deepEqual(await list({ limit: 2 }), [d, b]);
      assert.deepEqual(await list({ index: 1, limit: 2 }), [c, a]);
      assert.deepEqual(await list({ index: 2, limit: 2 }), [e]);
      assert.deepEqual(await list({ index: 3, limit: 2 }), []);
      assert.deepEqual(await list({ index: 1, limit: 1, state: 'READY' }), [a]);
      // The listing carries full headers and follows commits.
      const [newest] = await conversations().list({ index: 0, limit: 1, agentId: agent });
      assert.deepEqual(newest, header(d, rows[3]![1]));
      const moved = next(header(e, rows[4]![1]), 2, { lastModifiedOn: 400, state: 'ENDED' as ConversationStateName });
      assert.equal(await conversations().commit(e, 1, { row: moved, appendSteps: [step(1)] }), 'committed');
      assert.deepEqual(await list({}), [e, d, b, c, a]);
      assert.deepEqual(await list({ state: 'READY' }), [c, a]);
      assert.deepEqual((await conversations().list({ index: 0, limit: 1, agentId: agent }))[0], moved);
    });

    test('delete removes the conversation and its steps; later commits are not-found', async () => {
      const id = uniqueId();
      const bystander = uniqueId();
      const row = header(id, { stepCount: 2 });
      await conversations().create(row, [step(0), step(1)]);
      await conversations().create(header(bystander), [step(0)]);
      assert.equal(await conversations().delete(id), true);
      assert.equal(await conversations().load(id), undefined);
      assert.equal(await conversations().loadRow(id), undefined);
      assert.equal(await conversations().delete(id), false);
      assert.equal(await conversations().commit(id, 1, { row: next(row, 3), appendSteps: [step(2)] }), 'not-found');
      assert.deepEqual((await conversations().load(bystander))?.steps, [step(0)]);
      // The id can be created afresh, without the old steps.
      await conversations().create(header(id), ['{"again":true}']);
      assert.deepEqual((await conversations().load(id))?.steps, ['{"again":true}']);
    });

    test('user properties: upsert many, replace, load, retention sweep', async () => {
      const user = uniqueName('user');
      const other = uniqueName('user');
      const properties = storage().userProperties;
      assert.deepEqual(await properties.load(user), new Map());
      await properties.upsert(user, new Map(), 1_000); // nothing to write
      await properties.upsert(
        user,
        new Map([
          ['city', '"Vienna"'],
          ['count', '3'],
          ['nested', '{"a":[1,2,{"b":"\u00e9 \\" \'"}]}'],
          ['name with "quotes", {braces}', 'null'],
        ]),
        1_000,
      );
      await properties.upsert(other, new Map([['city', '"Graz"']]), 1_000);
      assert.deepEqual(
        await properties.load(user),
        new Map([
          ['city', '"Vienna"'],
          ['count', '3'],
          ['name with "quotes", {braces}', 'null'],
          ['nested', '{"a":[1,2,{"b":"\u00e9 \\" \'"}]}'],
        ]),
      );
      // Replace one, add one, keep the others.
      await properties.upsert(
        user,
        new Map([
          ['count', '4'],
          ['language', '"de"'],
        ]),
        5_000,
      );
      const loaded = await properties.load(user);
      assert.equal(loaded.get('count'), '4');
      assert.equal(loaded.get('language'), '"de"');
      assert.equal(loaded.get('city'), '"Vienna"');
      assert.equal(loaded.size, 5);
      assert.deepEqual(await properties.load(other), new Map([['city', '"Graz"']]));

      // Retention: the cutoff is exclusive; values written at or after it stay. Other tests use other times.
      assert.equal(await properties.deleteOlderThan(1_000), 0);
      const removed = await properties.deleteOlderThan(1_001);
      assert.ok(removed >= 4, `removed ${removed}`);
      assert.deepEqual(
        await properties.load(user),
        new Map([
          ['count', '4'],
          ['language', '"de"'],
        ]),
      );
      assert.deepEqual(await properties.load(other), new Map());
    });

    test('deployments: put is idempotent and refreshes, remove, list', async () => {
      const agent = uniqueName('agent');
      const deployments = storage().deployments;
      const mine = async () => (await deployments.list()).filter((record) => record.agentId === agent);
      await deployments.put({ environment: 'production', agentId: agent, agentVersion: 1, deployedOn: 100 });
      await deployments.put({ environment: 'production', agentId: agent, agentVersion: 1, deployedOn: 100 });
      await deployments.put({ environment: 'test', agentId: agent, agentVersion: 1, deployedOn: 200 });
      await deployments.put({ environment: 'production', agentId: agent, agentVersion: 2, deployedOn: 300 });
      assert.deepEqual(await mine(), [
        { environment: 'production', agentId: agent, agentVersion: 1, deployedOn: 100 },
        { environment: 'production', agentId: agent, agentVersion: 2, deployedOn: 300 },
        { environment: 'test', agentId: agent, agentVersion: 1, deployedOn: 200 },
      ]);
      await deployments.put({ environment: 'production', agentId: agent, agentVersion: 1, deployedOn: 400 });
      assert.equal((await mine())[0]?.deployedOn, 400);
      assert.equal((await mine()).length, 3);

      assert.equal(await deployments.remove('production', agent, 1), true);
      assert.equal(await deployments.remove('production', agent, 1), false);
      assert.equal(await deployments.remove('production', agent, 9), false);
      assert.equal(await deployments.remove('production', uniqueName('agent'), 2), false);
      assert.deepEqual(await mine(), [
        { environment: 'production', agentId: agent, agentVersion: 2, deployedOn: 300 },
        { environment: 'test', agentId: agent, agentVersion: 1, deployedOn: 200 },
      ]);
    });

    test('triggers: put creates then replaces, get, delete, list; owner, space and visibility kept, access set', async () => {
      const intent = uniqueName('intent');
      const second = `${intent}-z`;
      const triggers = storage().triggers;
      const body =
        '{"intent":"x",  "agentConfigs":[{"agentId":"a","environment":"production","initialContext":{"k":"\u00fc"}}]}';
      const origin = { ownerId: 'alice', spaceId: 'user:alice', visibility: 'private' };
      const record = (bodyJson: string, fields: object = {}) => ({
        intent,
        bodyJson,
        ownerId: 'alice',
        spaceId: 'user:alice',
        visibility: 'private',
        grants: undefined,
        ...fields,
      });
      assert.equal(await triggers.get(intent), undefined);
      assert.equal(await triggers.put(intent, body, 1_000, origin), true);
      assert.deepEqual(await triggers.get(intent), record(body));
      assert.equal(await triggers.put(intent, '{"replaced":true}', 2_000, { ownerId: 'mallory' }), false);
      assert.deepEqual(await triggers.get(intent), record('{"replaced":true}'), 'a replace keeps the owner');
      assert.equal(await triggers.put(second, '{"second":true}', 3_000), true);
      const unowned = {
        intent: second,
        bodyJson: '{"second":true}',
        ownerId: undefined,
        spaceId: undefined,
        visibility: undefined,
        grants: undefined,
      };
      const mine = async () => (await triggers.list()).filter((entry) => entry.intent.startsWith(intent));
      assert.deepEqual(await mine(), [record('{"replaced":true}'), unowned]);
      const grants = '[{"principal":"bob","level":"USE"}]';
      assert.deepEqual(
        await triggers.setAccess(intent, { visibility: 'space', grants }),
        record('{"replaced":true}', { visibility: 'space', grants }),
      );
      assert.deepEqual(
        await triggers.setAccess(intent, { spaceId: 'group:team' }),
        record('{"replaced":true}', { visibility: 'space', grants, spaceId: 'group:team' }),
      );
      assert.equal(await triggers.setAccess(`${intent}-unknown`, { visibility: 'public' }), undefined);
      assert.equal(await triggers.delete(intent), true);
      assert.equal(await triggers.delete(intent), false);
      assert.equal(await triggers.get(intent), undefined);
      assert.deepEqual(await mine(), [unowned]);
      assert.equal(await triggers.put(intent, '{"again":true}', 4_000), true);
    });

    test('managed conversations: set, get, replace, clear only when the id still matches', async () => {
      const intent = uniqueName('intent');
      const user = uniqueName('user');
      const triggers = storage().triggers;
      assert.equal(await triggers.managedConversation(intent, user), undefined);
      await triggers.clearManagedConversation(intent, user, 'nothing'); // no-op
      await triggers.setManagedConversation(intent, user, 'conv-1');
      await triggers.setManagedConversation(intent, 'another-user', 'conv-other');
      assert.equal(await triggers.managedConversation(intent, user), 'conv-1');
      await triggers.setManagedConversation(intent, user, 'conv-2');
      assert.equal(await triggers.managedConversation(intent, user), 'conv-2');
      await triggers.clearManagedConversation(intent, user, 'conv-1'); // stale id: nothing happens
      assert.equal(await triggers.managedConversation(intent, user), 'conv-2');
      await triggers.clearManagedConversation(intent, user, 'conv-2');
      assert.equal(await triggers.managedConversation(intent, user), undefined);
      assert.equal(await triggers.managedConversation(intent, 'another-user'), 'conv-other');
      assert.equal(await triggers.managedConversation(`${intent}-other`, 'another-user'), undefined);
    });

    test('reopening the same database keeps everything', async () => {
      const id = uniqueId();
      const user = uniqueName('user');
      const agent = uniqueName('agent');
      const intent = uniqueName('intent');
      const row = header(id, { agentId: agent, userId: user, stepCount: 2, stateJson: '{"\u00e4":1}' });
      await conversations().create(row, [step(0), step(1)]);
      const committed = next(row, 3, { state: 'ENDED' });
      assert.equal(await conversations().commit(id, 1, { row: committed, appendSteps: [step(2)] }), 'committed');
      await storage().userProperties.upsert(user, new Map([['k', '"v"']]), 9_000_000_000_000);
      await storage().deployments.put({ environment: 'test', agentId: agent, agentVersion: 3, deployedOn: 77 });
      await storage().triggers.put(intent, '{"t":1}', 5);
      await storage().triggers.setManagedConversation(intent, user, id);

      await reopen();

      assert.deepEqual(await conversations().load(id), { row: committed, steps: [step(0), step(1), step(2)] });
      assert.deepEqual(await conversations().list({ index: 0, limit: 10, agentId: agent }), [committed]);
      assert.deepEqual(await storage().userProperties.load(user), new Map([['k', '"v"']]));
      assert.deepEqual(
        (await storage().deployments.list()).filter((record) => record.agentId === agent),
        [{ environment: 'test', agentId: agent, agentVersion: 3, deployedOn: 77 }],
      );
      assert.equal((await storage().triggers.get(intent))?.bodyJson, '{"t":1}');
      assert.equal(await storage().triggers.managedConversation(intent, user), id);
      // Still writable after reopening.
      assert.equal(
        await conversations().commit(id, 2, { row: next(committed, 4), appendSteps: [step(3)] }),
        'committed',
      );
    });
  });
}

contract('sqlite', storageTargets.sqlite);
contract('postgres', storageTargets.postgres);
