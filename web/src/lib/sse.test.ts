import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sseEvents, type SseEvent } from './sse.ts';

/** A response body that arrives in exactly these chunks. */
function body(chunks: readonly Uint8Array<ArrayBuffer>[]): ReadableStream<Uint8Array<ArrayBuffer>> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next < chunks.length) controller.enqueue(chunks[next++]!);
      else controller.close();
    },
  });
}

const bytes = (text: string) => new TextEncoder().encode(text);

async function eventsOf(chunks: readonly Uint8Array<ArrayBuffer>[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of sseEvents(body(chunks))) events.push(event);
  return events;
}

describe('server-sent events', () => {
  it('reads CRLF line ends split across chunks as one line end', async () => {
    const chunks = [
      ': heartbeat\r',
      '\n\r\ndata: {"a"',
      ':1}\r',
      '\n\r',
      '\nevent: x\r\ndata: one\r',
      '\ndata: two\r',
      '\n\r',
      '\n',
    ];
    assert.deepEqual(await eventsOf(chunks.map(bytes)), [
      { id: undefined, event: undefined, data: '{"a":1}' },
      { id: undefined, event: 'x', data: 'one\ntwo' },
    ]);
  });

  it('reads LF and lone CR line ends, and a character split across chunks', async () => {
    const text = bytes('id: 7\nevent: token\ndata: {"text":"grüß"}\n\ndata: a\rdata: b\r\r: end\n');
    const umlaut = text.indexOf(0xc3);
    const events = await eventsOf([text.slice(0, umlaut + 1), text.slice(umlaut + 1)]);
    assert.deepEqual(events, [
      { id: '7', event: 'token', data: '{"text":"grüß"}' },
      { id: undefined, event: undefined, data: 'a\nb' },
    ]);
  });

  it('closes the body when the reader stops early', { timeout: 5_000 }, async () => {
    const { promise: cancelled, resolve: cancel } = Promise.withResolvers<void>();
    // A stream that stays open, as the log stream does.
    const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
      start: (controller) => controller.enqueue(bytes('data: 1\n\ndata: 2\n\n')),
      cancel: () => cancel(),
    });
    for await (const event of sseEvents(stream)) {
      assert.equal(event.data, '1');
      break;
    }
    await cancelled;
  });
});
