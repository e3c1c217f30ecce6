import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oldGenerationGrowthPer } from '../../test/support/young-generation.ts';
import { CompactStep, KEPT_STEPS } from './compact-step.ts';
import type { StoredStep } from './memory.ts';

const stepWith = (text: string, extra: Partial<StoredStep> = {}): StoredStep => ({
  entries: [
    { key: 'input:initial', value: text, timestamp: 1_795_500_000_123, public: true },
    { key: 'actions', value: ['greet'], timestamp: 1_795_500_000_124, originWorkflowId: 'w1', public: true },
    { key: 'output:text:greet', value: { type: 'text', text: `you said ${text}` }, timestamp: 1, public: true },
  ],
  output: { input: text, actions: ['greet'], output: [{ type: 'text', text: `you said ${text}` }] },
  timestamp: 1_795_500_000_125,
  properties: { city: { name: 'city', value: `${text} city`, scope: 'conversation' } },
  ...extra,
});

/** The step as plain data, the way a reader sees it through the `StoredStep` fields. */
const fieldsOf = (step: StoredStep) => ({
  entries: step.entries,
  output: step.output,
  timestamp: step.timestamp,
  properties: step.properties,
  ...(step.request === undefined ? {} : { request: step.request }),
});

describe('CompactStep', () => {
  const texts = {
    ascii: 'hello',
    'Latin-1': 'Grüße aus Köln, ½ × ©',
    'beyond Latin-1': '"hello" → greeting(hello) “quoted” 你好 😀 €',
  };
  for (const [kind, text] of Object.entries(texts)) {
    it(`keeps a step with ${kind} text: the stored JSON and every part read back are the step`, () => {
      const original = stepWith(text, {
        request: { idempotencyKey: `k-${text}`, fingerprint: 'f'.repeat(64), state: 'READY' },
      });
      const { step, json } = CompactStep.of(original);
      assert.deepEqual(JSON.parse(json), original, 'the store gets the whole step');
      assert.equal(step.storedJson, json);
      step.forgetParsed(); // as an earlier step: every part is parsed from the kept text
      assert.deepEqual(fieldsOf(step), original);
      assert.deepEqual(JSON.parse(JSON.stringify(step)), original, 'JSON.stringify writes the step');
      const reread = CompactStep.fromStored(json, false);
      assert.deepEqual(fieldsOf(reread), original, 'a step read from the store');
      assert.equal(reread.storedJson, json);
    });
  }

  it('keeps an earlier step read from the store as it was read, string or bytes: nothing is parsed until a field is read', () => {
    const broken = '{"entries":[not json';
    assert.doesNotThrow(() => CompactStep.fromStored(broken, false), 'a load parses none of the earlier steps');
    assert.throws(() => CompactStep.fromStored(broken, false).timestamp, SyntaxError, 'the first read does');
    assert.throws(() => CompactStep.fromStored(broken, true), SyntaxError, 'the latest step is parsed at once');
    const original = stepWith('Grüße → 你好', {
      request: { idempotencyKey: 'k', fingerprint: 'f'.repeat(64), state: 'READY' },
    });
    // As another store might give it back: spaces, keys in another order.
    const reordered = JSON.stringify(
      {
        properties: original.properties,
        request: original.request,
        timestamp: original.timestamp,
        output: original.output,
        entries: original.entries,
      },
      null,
      1,
    );
    for (const [form, text] of [
      ['a string', reordered],
      ['UTF-8 bytes', new Uint8Array(Buffer.from(reordered))],
      ['UTF-8 bytes inside a larger buffer', Buffer.concat([Buffer.from('[1,'), Buffer.from(reordered)]).subarray(3)],
    ] as const) {
      const step = CompactStep.fromStored(text, false);
      step.placeAfter(undefined);
      assert.equal(step.textThrough, Buffer.byteLength(reordered), `${form}: counted as read`);
      assert.equal(step.storedJson, reordered, `${form}: handed on as it was read`);
      assert.deepEqual(fieldsOf(step), original, `${form}: every field read back`);
      assert.deepEqual(JSON.parse(step.storedJson), original, `${form}: the same step once read`);
      const request = CompactStep.fromStored(text, false).request;
      assert.deepEqual(request, original.request, `${form}: the request alone (retries look it up)`);
    }
  });

  it('reads the request of a step read from the store from the end of its text, without parsing the rest', () => {
    const request = { idempotencyKey: 'k', fingerprint: 'f'.repeat(64), state: 'READY' };
    const tail = `,"timestamp":1,"properties":{},"request":${JSON.stringify(request)}}`;
    const unparsable = `{"entries":[not json],"output":{}${tail}`;
    assert.deepEqual(CompactStep.fromStored(unparsable, false).request, request, 'the rest is not parsed');
    assert.throws(
      () => CompactStep.fromStored(unparsable, false).timestamp,
      SyntaxError,
      'as a read of another part is',
    );
    const none = '{"entries":[],"output":{},"timestamp":1,"properties":{}}';
    assert.equal(CompactStep.fromStored(none, false).request, undefined);
    // A member of the same name further in: the whole text is parsed, and tells.
    const nested = (last: string) =>
      `{"entries":[],"output":{},"timestamp":1,"properties":{"p":{"name":"p","scope":"conversation","value":{"a":1,"request":${JSON.stringify(request)}}}}${last}}`;
    assert.equal(CompactStep.fromStored(nested(''), false).request, undefined);
    const other = { ...request, idempotencyKey: 'outer' };
    assert.deepEqual(CompactStep.fromStored(nested(`,"request":${JSON.stringify(other)}`), false).request, other);
    const spaced = `{"entries":[],"output":{},"timestamp":1,"properties":{},"request": ${JSON.stringify(request)}}`;
    assert.deepEqual(CompactStep.fromStored(spaced, false).request, request, 'another writer’s spacing');
  });

  it('answers the parsed parts of the step it was made from while it is the latest, fresh parses after', () => {
    const original = stepWith('hi');
    const { step } = CompactStep.of(original);
    assert.equal(step.output, original.output, 'the latest step answers the objects it was made from');
    step.forgetParsed();
    const output = step.output;
    assert.notEqual(output, original.output);
    assert.deepEqual(output, original.output);
    assert.deepEqual(step.entries, original.entries);
    assert.deepEqual(step.output, original.output, 'another part read in between');
    step.keepParsed();
    assert.equal(step.properties, step.properties, 'kept again once it is the latest again (after an undo)');
    assert.equal(CompactStep.of(step).step, step, 'a compact step is not made again');
  });

  it('keeps a step without request or properties', () => {
    const original = stepWith('x', { properties: {} });
    const { step, json } = CompactStep.of(original);
    step.forgetParsed();
    assert.equal(step.request, undefined);
    assert.equal('request' in JSON.parse(json), false);
    assert.deepEqual(step.properties, {});
  });

  it(`keeps parsed parts for the ${KEPT_STEPS} steps last made or kept again: earlier ones (idle conversations) keep text`, () => {
    const original = stepWith('first');
    const { step: first } = CompactStep.of(original);
    const { step: second } = CompactStep.of(stepWith('second'));
    assert.equal(first.output, original.output);
    for (let n = 0; n < KEPT_STEPS - 2; n++) CompactStep.of(stepWith(`step ${n}`));
    assert.equal(first.output, original.output, 'still among the last made');
    CompactStep.of(stepWith('one more'));
    assert.notEqual(first.output, original.output, 'parsed again from its text');
    assert.deepEqual(first.output, original.output);
    CompactStep.of(stepWith('and another')); // the second one's turn to forget
    const parsedAgain = second.output;
    assert.equal(second.entries.length, 3);
    assert.notEqual(second.output, parsedAgain, 'a step keeping nothing parses again after another part was read');
    second.keepParsed(); // as an undo does for the step that is the latest again
    const kept = second.output;
    assert.equal(second.entries.length, 3);
    assert.equal(second.output, kept, 'kept once asked to keep');
  });

  it('keeps a frozen entry value (a rule group’s failed names, shared by many steps) by reference, not as text', () => {
    const failed = Object.freeze(Array.from({ length: 30 }, (_, n) => `Topic ${n} “quoted” 你好`));
    const withFailed = (text: string) =>
      stepWith(text, {
        entries: [
          ...stepWith(text).entries,
          { key: 'behavior_rules:fail', value: failed, timestamp: 2, public: false },
          { key: 'again', value: failed, timestamp: 3, public: false },
        ],
      });
    for (const text of ['ascii', 'beyond → Latin-1']) {
      const original = withFailed(text);
      const { step, json } = CompactStep.of(original);
      assert.deepEqual(JSON.parse(json), original, 'the store gets the whole step');
      step.placeAfter(undefined);
      const bytesOfList = Buffer.byteLength(JSON.stringify(failed));
      assert.ok(step.textThrough <= Buffer.byteLength(json) - 2 * bytesOfList, 'the list is not kept as text');
      step.forgetParsed();
      assert.deepEqual(fieldsOf(step), original, 'read back whole');
      assert.equal(step.storedJson, json);
      assert.deepEqual(JSON.parse(JSON.stringify(step)), original);
    }
  });

  it('keeps the text of a step that no longer keeps its parts outside the heap: the young collector copies little of it', async () => {
    const text = 'x'.repeat(4_000);
    const kept: CompactStep[] = [];
    const grown = await oldGenerationGrowthPer(KEPT_STEPS, () => {
      for (let index = 0; index < KEPT_STEPS; index++) {
        const { step } = CompactStep.of(stepWith(`${index} ${text}`));
        step.forgetParsed(); // as an earlier step of its conversation
        kept.push(step);
      }
    });
    const textBytes = Buffer.byteLength(kept[0]!.storedJson);
    assert.ok(
      grown < 1_000,
      `the old generation grew by ${grown.toFixed(0)} bytes a step of ${textBytes} bytes of text`,
    );
    assert.equal(kept.at(-1)!.output.input, `${KEPT_STEPS - 1} ${text}`, 'the text is all there');
  });

  it("keeps a step outside the cache (a start's) parsed without holding it: nobody keeping it, it dies young", async () => {
    const grownPerStep = (inCache: boolean) =>
      oldGenerationGrowthPer(KEPT_STEPS, () => {
        for (let index = 0; index < KEPT_STEPS; index++) {
          const { step } = CompactStep.of(stepWith(`${index} ${'x'.repeat(4_000)}`), inCache);
          assert.equal(step.output.input, `${index} ${'x'.repeat(4_000)}`);
        }
      });
    assert.ok((await grownPerStep(true)) > 4_000, 'steps of cached conversations keep their places (the control)');
    const outside = await grownPerStep(false);
    assert.ok(outside < 500, `the old generation grew by ${outside.toFixed(0)} bytes a step`);
  });
});
