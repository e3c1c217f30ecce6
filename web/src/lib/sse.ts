/** An incremental server-sent-events parser (for a fetch body stream, which can carry a bearer token). Pure. */

export interface SseEvent {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

export function createSseParser(onEvent: (event: SseEvent) => void): { feed(chunk: string): void } {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  const dispatch = () => {
    if (data.length > 0) onEvent({ event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) });
    data = [];
    event = '';
  };
  return {
    feed(chunk: string) {
      buffer += chunk;
      for (;;) {
        const nl = buffer.search(/\r\n|\r|\n/);
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? nl + 2 : nl + 1);
        if (line === '') {
          dispatch();
          continue;
        }
        if (line.startsWith(':')) continue; // comment / heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id') id = value;
      }
    },
  };
}
