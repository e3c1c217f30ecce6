import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, it, mock } from 'node:test';
import Fastify from 'fastify';
import { EventStream, openEventStream } from './event-stream.ts';

/** A socket stand-in whose reader the test controls: nothing is consumed until `read()` is called. */
function slowReader(highWaterMark: number) {
  const received: string[] = [];
  const pending: (() => void)[] = [];
  const out = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      received.push(chunk);
      pending.push(done);
    },
  });
  return {
    out,
    received,
    /** Lets every chunk written so far (and those the stream writes meanwhile) through. */
    async read(): Promise<void> {
      while (pending.length > 0) {
        pending.shift()!();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

const dataOf = (chunks: string[]) =>
  chunks
    .join('')
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)));

describe('event stream', () => {
  afterEach(() => mock.timers.reset());

  it('waits for drain when the socket buffer is full, then sends the queued events in order', async () => {
    const socket = slowReader(64);
    const stream = new EventStream(socket.out);
    const first = stream.send({ n: 0, padding: 'x'.repeat(80) });
    assert.equal(await first, true, 'taken at once while the buffer had room');
    const waiting = [1, 2, 3].map((n) => stream.send({ n }));
    // Nothing more reached the socket: the events wait in the stream's own queue.
    assert.equal(socket.out.writableLength, socket.received.join('').length);
    assert.ok(socket.out.writableLength < 200);
    let settled = false;
    void Promise.all(waiting).then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'senders that wait are held until drain');

    await socket.read();
    assert.deepEqual(await Promise.all(waiting), [true, true, true]);
    assert.deepEqual(
      dataOf(socket.received).map((event) => event.n),
      [0, 1, 2, 3],
    );
    stream.close();
  });

  it('drops events beyond maxQueuedBytes while the client does not read', async () => {
    const socket = slowReader(16);
    const stream = new EventStream(socket.out, { maxQueuedBytes: 40 });
    await stream.send('fills the socket buffer');
    const queued = stream.send('queued one, over forty bytes with its framing');
    assert.equal(await stream.send('dropped'), false);
    await socket.read();
    assert.equal(await queued, true);
    assert.deepEqual(dataOf(socket.received), [
      'fills the socket buffer',
      'queued one, over forty bytes with its framing',
    ]);
    stream.close();
  });

  it('close hands queued events to the socket, ends it and aborts the signal', async () => {
    const socket = slowReader(16);
    const stream = new EventStream(socket.out);
    await stream.send('a');
    const queued = stream.send('b', 'done');
    stream.close();
    assert.equal(stream.signal.aborted, true);
    assert.equal(await queued, true);
    assert.equal(await stream.send('after close'), false);
    await socket.read();
    assert.equal(socket.out.writableEnded, true);
    assert.equal(socket.received.join(''), 'data: "a"\n\nevent: done\ndata: "b"\n\n');
  });

  it('sends a heartbeat comment every interval, none while waiting for drain or after close', () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const out = new PassThrough();
    const written: string[] = [];
    out.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    const stream = new EventStream(out, { heartbeatMs: 1000 });
    mock.timers.tick(999);
    assert.deepEqual(written, []);
    mock.timers.tick(1);
    assert.deepEqual(written, [': heartbeat\n\n']);
    mock.timers.tick(2000);
    assert.equal(written.length, 3);
    stream.close();
    mock.timers.tick(5000);
    assert.equal(written.length, 3);
  });

  it('skips heartbeats while the socket buffer is full', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const socket = slowReader(8);
    const stream = new EventStream(socket.out, { heartbeatMs: 1000 });
    void stream.send('fills the buffer');
    mock.timers.tick(3000);
    await socket.read();
    assert.equal(socket.received.join(''), 'data: "fills the buffer"\n\n');
    mock.timers.tick(1000);
    assert.equal(socket.received.at(-1), ': heartbeat\n\n', 'heartbeats resume after drain');
    stream.close();
  });

  it('over HTTP: carries the headers hooks set, and a client that goes away aborts the signal', async () => {
    const app = Fastify();
    app.addHook('onRequest', async (request, reply) => {
      reply.header('access-control-allow-origin', 'https://manager.example').header('x-request-id', request.id);
    });
    const opened = Promise.withResolvers<EventStream>();
    app.get('/events', async (_request, reply) => {
      const stream = openEventStream(reply);
      void stream.send({ hello: 'world' }, 'greeting');
      opened.resolve(stream);
    });
    try {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const client = new AbortController();
      const response = await fetch(`${address}/events`, { signal: client.signal });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(response.headers.get('access-control-allow-origin'), 'https://manager.example');
      assert.ok(response.headers.get('x-request-id'));
      const reader = response.body!.getReader();
      assert.equal(
        new TextDecoder().decode((await reader.read()).value),
        'event: greeting\ndata: {"hello":"world"}\n\n',
      );

      const stream = await opened.promise;
      assert.equal(stream.signal.aborted, false);
      client.abort();
      await once(stream.signal, 'abort');
      assert.equal(await stream.send('to nobody'), false);
    } finally {
      await app.close();
    }
  });
});
