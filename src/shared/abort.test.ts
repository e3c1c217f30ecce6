import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { oldGenerationGrowthPer } from '../../test/support/young-generation.ts';
import { linkedSignal } from './abort.ts';

test('a linked signal aborts with the reason of the signal that aborted first', () => {
  const [turn, tool] = [new AbortController(), new AbortController()];
  const call = linkedSignal([turn.signal, tool.signal], 60_000);
  const reason = new Error('the tool was cancelled');
  tool.abort(reason);
  turn.abort(new Error('later'));
  assert.equal(call.signal.reason, reason);
  call.release();
});

test('a linked signal of a signal aborted already is aborted, with its reason', () => {
  const turn = new AbortController();
  const reason = new Error('gone');
  turn.abort(reason);
  const call = linkedSignal([new AbortController().signal, turn.signal], 60_000);
  assert.equal(call.signal.reason, reason);
  call.release();
});

test("after its time limit a linked signal aborts with AbortSignal.timeout's reason, or the one given", async () => {
  const call = linkedSignal([new AbortController().signal], 5);
  await once(call.signal, 'abort');
  assert.ok(call.signal.reason instanceof DOMException);
  assert.equal(call.signal.reason.name, 'TimeoutError');
  const reason = new Error('no answer within 0.005 s');
  const own = linkedSignal([], 5, () => reason);
  await once(own.signal, 'abort');
  assert.equal(own.signal.reason, reason);
});

test('one signal and no time limit: that signal; released, a linked signal follows the others no more', () => {
  const turn = new AbortController();
  assert.equal(linkedSignal([turn.signal], undefined).signal, turn.signal);
  const call = linkedSignal([turn.signal], 60_000);
  call.release();
  turn.abort(new Error('later'));
  assert.equal(call.signal.aborted, false);
});

/**
 * `AbortSignal.any` registers each signal it makes for finalization, and young collections keep such a signal,
 * with what its listeners hold (a provider request and its answer), until a full collection. A linked signal is made
 * without it: signals nobody keeps die young.
 */
test('released linked signals, and what their listeners hold, die in the young generation', async () => {
  const turn = new AbortController();
  const calls = 2_000;
  const grownPerCall = await oldGenerationGrowthPer(calls, () => {
    for (let index = 0; index < calls; index++) {
      const call = linkedSignal([turn.signal], 60_000);
      const answer = `${index} ${'x'.repeat(4_000)}`;
      call.signal.addEventListener('abort', () => answer.length);
      call.release();
    }
  });
  assert.ok(grownPerCall < 500, `the old generation grew by ${grownPerCall.toFixed(0)} bytes a call`);
});
