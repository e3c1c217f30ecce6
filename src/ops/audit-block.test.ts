import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockDocument, entriesOfBlock } from './audit-block.ts';
import type { AuditEntry } from './audit-entry.ts';

/** A rule-only turn's four entries, as the ledger drafts them (unsigned). */
function turnEntries(firstSequence: number, stepIndex: number): AuditEntry[] {
  const shared = {
    conversationId: 'c0ffee',
    agentId: 'agent-1',
    agentVersion: 2,
    userId: 'ada',
    environment: 'production',
    stepIndex,
    workflowId: 'wf',
  };
  const userInput = { userInput: 'hello', context: ['lang'] };
  const task = (
    offset: number,
    taskType: string,
    before: string[],
    after: string[],
    output: Record<string, unknown>,
  ): AuditEntry => ({
    id: `id-${firstSequence + offset}`,
    ...shared,
    taskId: `wf:${offset}`,
    taskType,
    taskIndex: offset,
    durationMs: 0.1 + offset,
    actions: after,
    input: { ...userInput, actions: before },
    output,
    llmDetail: null,
    outcome: 'ok',
    error: null,
    timestamp: '2026-11-25T02:00:30.238Z',
    sequence: firstSequence + offset,
    previousHmac: null,
    hmac: null,
  });
  return [
    task(0, 'ai.svc.parser', [], [], { 'expressions:matches': ['"hello" → greeting(hello)'] }),
    task(1, 'ai.svc.behavior', [], ['greet'], { 'behavior_rules:success': ['Greeting'], actions: ['greet'] }),
    task(2, 'ai.svc.output', ['greet'], ['greet'], { 'output:text:greet': { type: 'text', text: 'Hi' } }),
    task(3, 'ai.svc.templating', ['greet'], ['greet'], { 'output:text:greet': { type: 'text', text: 'Hi' } }),
  ];
}

/** `entries` as JSON gives them back (members without a value dropped). */
const asJson = (entries: readonly unknown[]) => JSON.parse(JSON.stringify(entries));

describe('audit blocks', () => {
  it("a turn's entries are stored as the first one and what each later one changes, and read back as they were", () => {
    const entries = turnEntries(5, 1);
    const document = blockDocument(entries);
    const stored = JSON.parse(document);
    assert.equal(stored.deltas.length, 4);
    assert.deepEqual(stored.deltas[0], entries[0]);
    // The output task found the actions the behavior task left, and changed none: none of it is stored again.
    assert.deepEqual(Object.keys(stored.deltas[2]).sort(), [
      'durationMs',
      'id',
      'output',
      'taskId',
      'taskIndex',
      'taskType',
    ]);
    assert.ok(document.length < JSON.stringify(entries).length * 0.7, `${document.length} characters`);
    assert.deepEqual(entriesOfBlock(document), asJson(entries));
  });

  it('signed entries chain: each previousHmac is the hmac before it, and is not stored again', () => {
    const entries = turnEntries(1, 0).map((entry, index) => ({
      ...entry,
      previousHmac: index === 0 ? 'v1:start' : `v1:${index - 1}`,
      hmac: `v1:${index}`,
    }));
    const stored = JSON.parse(blockDocument(entries));
    assert.equal(stored.deltas[1].previousHmac, undefined);
    assert.equal(stored.deltas[1].hmac, 'v1:1');
    assert.deepEqual(entriesOfBlock(blockDocument(entries)), asJson(entries));
  });

  it('a member that differs from the chain (a sequence gap, a foreign previousHmac, other input) is stored', () => {
    const entries = turnEntries(1, 0);
    const changed = [
      entries[0]!,
      {
        ...entries[1]!,
        sequence: 9,
        previousHmac: 'v1:elsewhere',
        input: { ...entries[1]!.input, userInput: 'other' },
      },
      { ...entries[2]!, sequence: 10, stepIndex: 4, llmDetail: { model: 'm' }, outcome: 'error' as const, error: 'x' },
      { ...entries[3]!, sequence: 11, actions: [], input: { ...entries[3]!.input, actions: ['before'] } },
    ];
    assert.deepEqual(entriesOfBlock(blockDocument(changed)), asJson(changed));
  });

  it('entries of different shapes (a decision beside a turn, a member missing) are kept as a plain array', () => {
    const [first, second] = turnEntries(1, 0);
    const decision = { ...second!, input: { pauseType: 'tool', task: 2, toolCalls: [] } };
    for (const block of [
      [first!, decision],
      [first!, { ...second!, extra: 1 } as unknown as AuditEntry],
      [{ ...first!, llmDetail: undefined } as unknown as AuditEntry, second!],
    ]) {
      const document = blockDocument(block);
      assert.ok(Array.isArray(JSON.parse(document)), document);
      assert.deepEqual(entriesOfBlock(document), asJson(block));
    }
  });

  it('members without a value are dropped as JSON drops them, and equal values in another order count as equal', () => {
    const [first, second] = turnEntries(1, 0);
    const withUndefined = [
      { ...first!, output: { a: undefined, b: [1, undefined] } },
      { ...second!, output: { b: [1, null] } },
    ];
    assert.deepEqual(entriesOfBlock(blockDocument(withUndefined)), asJson(withUndefined));
    const reordered = [first!, { ...second!, input: { actions: [], context: ['lang'], userInput: 'hello' } }];
    assert.deepEqual(entriesOfBlock(blockDocument(reordered)), asJson(reordered));
  });

  it('random blocks read back as they were given', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const pick = <T>(values: readonly T[]): T => values[random(values.length)]!;
    const values = [null, 0, 1, 'a', 'b', [], ['a'], ['a', 'b'], { x: 1 }, { x: 2 }, { y: [1] }, true];
    for (let run = 0; run < 500; run++) {
      const block: AuditEntry[] = [];
      let entry = turnEntries(1, 0)[0]!;
      for (let index = 0, length = 1 + random(5); index < length; index++) {
        const changed: Record<string, unknown> = { ...entry, input: { ...(entry.input as object) } };
        for (let change = random(4); change > 0; change--) {
          const key = pick(Object.keys(changed));
          if (key === 'input')
            (changed.input as Record<string, unknown>)[pick(['userInput', 'context', 'actions'])] = pick(values);
          else changed[key] = pick(values);
        }
        if (random(3) === 0) changed.sequence = (entry.sequence as number) + 1;
        if (random(3) === 0) changed.previousHmac = entry.hmac;
        entry = changed as unknown as AuditEntry;
        block.push(entry);
      }
      assert.deepEqual(entriesOfBlock(blockDocument(block)), asJson(block), JSON.stringify(block));
    }
  });

  it('reads what was stored before: a JSON array of entries, a single entry; text that is no JSON is one unreadable item', () => {
    const [first, second] = turnEntries(1, 0);
    assert.deepEqual(entriesOfBlock(JSON.stringify([first, second])), asJson([first, second]));
    assert.deepEqual(entriesOfBlock(JSON.stringify(first)), asJson([first]));
    assert.deepEqual(entriesOfBlock('{"deltas":[{"id":"a"},7]}'), [{ id: 'a' }, { unreadable: 7 }]);
    assert.deepEqual(entriesOfBlock('not json'), ['not json']);
  });
});
