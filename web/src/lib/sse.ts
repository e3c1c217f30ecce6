/**
 * The events of a server-sent-events body read with fetch (which, unlike EventSource, can carry a bearer token).
 * Parsing is `eventsource-parser`'s; the bytes are decoded as a stream, so neither a character nor a line end
 * (`\r\n`) split across chunks is misread.
 */
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';

/** An event; `event` is undefined for the default type (`message`). */
export type SseEvent = EventSourceMessage;

export async function* sseEvents(body: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // A consumer that stops early closes the connection; after the end or an error this does nothing.
    await reader.cancel().catch(() => undefined);
  }
}
