import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingMismatchError } from '../runtime/replay.ts';
import { RecordedCalls } from './recorded-calls.ts';

const weather = (city: string, temp: number) => ({
  name: 'weather',
  request: { method: 'GET', uri: `http://api.test/weather?q=${city}` },
  response: { status: 200, body: { temp } },
});

describe('recorded calls of a step', () => {
  it('answers calls by name and request, in any order, with the body as it came over the wire', () => {
    const calls = new RecordedCalls({ httpCalls: [weather('Paris', 21), weather('Rome', 25)] }, { liveLlm: false });
    const rome = calls.httpCall('weather', { method: 'get', uri: 'http://api.test/weather?q=Rome' });
    assert.deepEqual(rome, { status: 200, headers: { 'content-type': 'application/json' }, body: '{"temp":25}' });
    assert.equal(
      calls.httpCall('weather', { method: 'GET', uri: 'http://api.test/weather?q=Paris' })?.body,
      '{"temp":21}',
    );
    assert.deepEqual(calls.mismatches(), []);
  });

  it('names a request that differs from its recording, and recorded calls never made', () => {
    const calls = new RecordedCalls(
      { httpCalls: [weather('Paris', 21)], llm: [{ task: 'chat', answer: 'Hi' }] },
      { liveLlm: false },
    );
    assert.throws(
      () => calls.httpCall('weather', { method: 'GET', uri: 'http://api.test/forecast?q=Paris' }),
      (error: unknown) =>
        error instanceof RecordingMismatchError &&
        error.message ===
          "recording mismatch: HTTP call 'weather' sent GET http://api.test/forecast?q=Paris, the recording has GET http://api.test/weather?q=Paris",
    );
    assert.throws(
      () => calls.httpCall('other', { method: 'POST', uri: 'http://x/', body: '{}' }),
      /'other' \(POST http:\/\/x\/ with body \{\}\) is not in the recording/,
    );
    assert.deepEqual(calls.mismatches().slice(2), [
      "recording mismatch: HTTP call 'weather' (GET http://api.test/weather?q=Paris) was recorded but not made",
      "recording mismatch: LLM task 'chat' was recorded but not asked",
    ]);
  });

  it('answers LLM tasks from the recording, or leaves them live; calls made by tools are optional while LLM answers are recorded', () => {
    const recordings = {
      httpCalls: [{ ...weather('Paris', 21), byTool: true }],
      llm: [{ task: 'chat', answer: 'Sunny.' }],
    };
    const recorded = new RecordedCalls(recordings, { liveLlm: false });
    assert.equal(recorded.llmAnswer('chat'), 'Sunny.');
    assert.throws(() => recorded.llmAnswer('chat'), /LLM task 'chat' has no recorded answer/);
    assert.deepEqual(recorded.mismatches(), [
      "recording mismatch: LLM task 'chat' has no recorded answer in this step",
    ]);

    const live = new RecordedCalls(recordings, { liveLlm: true });
    assert.equal(live.llmAnswer('chat'), undefined);
    assert.deepEqual(live.mismatches(), [
      "recording mismatch: HTTP call 'weather' (GET http://api.test/weather?q=Paris) was recorded but not made",
    ]);
  });

  it('answers retrievals by task whether the LLM is live or not; a missing or unused one is a mismatch', () => {
    const source = {
      knowledgeBase: 'policies',
      documentId: 'a1',
      documentName: 'returns.txt',
      chunkIndex: 0,
      text: 'Returns within 30 days.',
      score: 0.9,
    };
    for (const liveLlm of [false, true]) {
      const calls = new RecordedCalls(
        {
          retrieval: [
            { task: 'answer', sources: [source] },
            { task: 'other', sources: [] },
          ],
        },
        { liveLlm },
      );
      assert.deepEqual(calls.retrievedSources('answer'), [source]);
      assert.throws(() => calls.retrievedSources('answer'), RecordingMismatchError, 'each recording answers once');
      assert.deepEqual(calls.mismatches(), [
        "recording mismatch: the knowledge-base retrieval of LLM task 'answer' is not in the recording of this step",
        "recording mismatch: the knowledge-base retrieval of LLM task 'other' was recorded but not made",
      ]);
    }
  });

  it('answers a fire-and-forget call with nothing, and text bodies as text', () => {
    const calls = new RecordedCalls(
      {
        httpCalls: [
          { name: 'notify', request: { method: 'POST', uri: 'http://x/n', body: 'a' } },
          { name: 'page', request: { method: 'GET', uri: 'http://x/p' }, response: { status: 404, body: 'missing' } },
        ],
      },
      { liveLlm: false },
    );
    assert.equal(calls.httpCall('notify', { method: 'POST', uri: 'http://x/n', body: 'a' }), undefined);
    assert.deepEqual(calls.httpCall('page', { method: 'GET', uri: 'http://x/p' }), {
      status: 404,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'missing',
    });
  });
});
