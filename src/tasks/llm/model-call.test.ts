import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ProviderTimeoutError } from '../../llm/retry.ts';
import { callSignal } from './model-call.ts';

test("a model call's signal aborts with the turn's reason", () => {
  const turn = new AbortController();
  const call = callSignal(turn.signal, 60_000);
  const reason = new Error('the turn ran out of time');
  turn.abort(reason);
  assert.equal(call.signal.reason, reason);
  call.release();
});

test("a model call's signal of a turn aborted already is aborted", () => {
  const turn = new AbortController();
  turn.abort(new Error('gone'));
  const call = callSignal(turn.signal, 60_000);
  assert.equal(call.signal.aborted, true);
  call.release();
});

test("a model call's signal aborts with a ProviderTimeoutError after the provider's time limit", async () => {
  const call = callSignal(new AbortController().signal, 5);
  await once(call.signal, 'abort');
  assert.ok(call.signal.reason instanceof ProviderTimeoutError);
  call.release();
});

test("without a time limit the call's signal is the turn's; released, the turn's abort reaches it no more", () => {
  const turn = new AbortController();
  assert.equal(callSignal(turn.signal, undefined).signal, turn.signal);
  const call = callSignal(turn.signal, 60_000);
  call.release();
  turn.abort(new Error('later'));
  assert.equal(call.signal.aborted, false);
});

/**
 * `AbortSignal.any` registers each signal it makes for finalization, and young collections keep such a signal,
 * with what its listeners hold (a provider request and its answer), until a full collection. The call's signal is
 * made without it: signals of calls nobody keeps die young.
 */
test('the signals of finished calls, and what their listeners hold, die in the young generation', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major'; execution: 'sync' }) => void;
  const oldGeneration = () =>
    getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
  const turn = new AbortController();
  gc({ type: 'major', execution: 'sync' });
  const before = oldGeneration();
  const calls = 2_000;
  for (let index = 0; index < calls; index++) {
    const call = callSignal(turn.signal, 60_000);
    const answer = `${index} ${'x'.repeat(4_000)}`;
    call.signal.addEventListener('abort', () => answer.length);
    call.release();
  }
  gc({ type: 'minor', execution: 'sync' });
  gc({ type: 'minor', execution: 'sync' });
  const grownPerCall = (oldGeneration() - before) / calls;
  assert.ok(grownPerCall < 500, `the old generation grew by ${grownPerCall.toFixed(0)} bytes a call`);
});
