import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogBuffer, parseLogLevel, teeDestination, type LogEntry } from './log-buffer.ts';

const line = (fields: Record<string, unknown>): string =>
  `${JSON.stringify({ level: 30, time: 1_700_000_000_000, pid: 1, hostname: 'h', msg: 'hello', ...fields })}\n`;

describe('log buffer', () => {
  it('converts a pino line to an entry and omits empty fields', () => {
    const buffer = createLogBuffer(10);
    buffer.write(
      line({
        level: 40,
        msg: 'Turn slow',
        name: 'runtime',
        agentId: 'a1',
        agentVersion: 3,
        conversationId: 'c1',
        userId: null,
        environment: 'production',
        reqId: 'req-1',
      }),
    );
    assert.deepEqual(buffer.recent(), [
      {
        timestamp: 1_700_000_000_000,
        level: 'WARN',
        loggerName: 'runtime',
        message: 'Turn slow',
        agentId: 'a1',
        agentVersion: 3,
        conversationId: 'c1',
        environment: 'production',
        reqId: 'req-1',
      },
    ]);
  });

  it('maps every pino level', () => {
    const buffer = createLogBuffer(10);
    for (const level of [10, 20, 30, 40, 50, 60]) buffer.write(line({ level }));
    assert.deepEqual(
      buffer.recent({ level: 'TRACE' }).map((e) => e.level),
      ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'],
    );
  });

  it('uses the error message when a line has no msg', () => {
    const buffer = createLogBuffer(10);
    buffer.write(JSON.stringify({ level: 50, time: 1, err: { type: 'Error', message: 'boom', stack: 'Error: boom' } }));
    const [entry] = buffer.recent();
    assert.equal(entry?.message, 'boom');
    assert.deepEqual(entry?.err, { type: 'Error', message: 'boom', stack: 'Error: boom' });
  });

  it('keeps only the newest entries when the ring wraps around', () => {
    const buffer = createLogBuffer(3);
    for (let i = 1; i <= 7; i += 1) buffer.write(line({ msg: `m${i}` }));
    assert.equal(buffer.size, 3);
    assert.deepEqual(
      buffer.recent().map((e) => e.message),
      ['m5', 'm6', 'm7'],
    );
  });

  it('filters by level (this level and above, INFO by default)', () => {
    const buffer = createLogBuffer(10);
    buffer.write(line({ level: 20, msg: 'debug' }));
    buffer.write(line({ level: 30, msg: 'info' }));
    buffer.write(line({ level: 40, msg: 'warn' }));
    buffer.write(line({ level: 50, msg: 'error' }));
    assert.deepEqual(
      buffer.recent().map((e) => e.message),
      ['info', 'warn', 'error'],
    );
    assert.deepEqual(
      buffer.recent({ level: 'WARN' }).map((e) => e.message),
      ['warn', 'error'],
    );
    assert.deepEqual(
      buffer.recent({ level: 'DEBUG' }).map((e) => e.message),
      ['debug', 'info', 'warn', 'error'],
    );
  });

  it('searches the message case-insensitively and filters by agent and conversation', () => {
    const buffer = createLogBuffer(10);
    buffer.write(line({ msg: 'Agent DEPLOYED', agentId: 'a1' }));
    buffer.write(line({ msg: 'turn done', agentId: 'a1', conversationId: 'c1' }));
    buffer.write(line({ msg: 'deployment failed', agentId: 'a2' }));
    assert.deepEqual(
      buffer.recent({ search: 'deploy' }).map((e) => e.message),
      ['Agent DEPLOYED', 'deployment failed'],
    );
    assert.deepEqual(
      buffer.recent({ agentId: 'a1' }).map((e) => e.message),
      ['Agent DEPLOYED', 'turn done'],
    );
    assert.deepEqual(
      buffer.recent({ conversationId: 'c1' }).map((e) => e.message),
      ['turn done'],
    );
    assert.deepEqual(buffer.recent({ search: 'nothing' }), []);
  });

  it('limits to the newest matching entries, newest last, 100 by default', () => {
    const buffer = createLogBuffer(500);
    for (let i = 0; i < 300; i += 1) buffer.write(line({ msg: `m${i}` }));
    const all = buffer.recent();
    assert.equal(all.length, 100);
    assert.equal(all[0]?.message, 'm200');
    assert.equal(all[99]?.message, 'm299');
    assert.deepEqual(
      buffer.recent({ limit: 2 }).map((e) => e.message),
      ['m298', 'm299'],
    );
    assert.deepEqual(buffer.recent({ limit: 0 }), []);
  });

  it('keeps a line that is not JSON as an INFO entry with the raw text', () => {
    const buffer = createLogBuffer(10);
    assert.doesNotThrow(() => buffer.write('plain text, not json\n'));
    assert.doesNotThrow(() => buffer.write('[1,2]'));
    const entries = buffer.recent();
    assert.deepEqual(
      entries.map((e) => [e.level, e.message]),
      [
        ['INFO', 'plain text, not json'],
        ['INFO', '[1,2]'],
      ],
    );
    assert.equal(typeof entries[0]?.timestamp, 'number');
  });

  it('splits a chunk holding several lines', () => {
    const buffer = createLogBuffer(10);
    buffer.write(line({ msg: 'one' }) + line({ msg: 'two' }));
    assert.deepEqual(
      buffer.recent().map((e) => e.message),
      ['one', 'two'],
    );
  });

  it('delivers live entries to subscribers that match, until they unsubscribe', () => {
    const buffer = createLogBuffer(10);
    const seen: LogEntry[] = [];
    const unsubscribe = buffer.subscribe((entry) => seen.push(entry), { level: 'WARN', search: 'disk' });
    assert.equal(buffer.subscriberCount, 1);
    buffer.write(line({ level: 50, msg: 'Disk full' }));
    buffer.write(line({ level: 30, msg: 'disk ok' }));
    buffer.write(line({ level: 50, msg: 'network down' }));
    unsubscribe();
    assert.equal(buffer.subscriberCount, 0);
    buffer.write(line({ level: 50, msg: 'disk full again' }));
    assert.deepEqual(
      seen.map((e) => e.message),
      ['Disk full'],
    );
  });

  it('survives a throwing subscriber', () => {
    const buffer = createLogBuffer(10);
    buffer.subscribe(() => {
      throw new Error('listener bug');
    });
    assert.doesNotThrow(() => buffer.write(line({ msg: 'still logged' })));
    assert.equal(buffer.recent()[0]?.message, 'still logged');
  });

  it('tees lines to the buffer and to the other destination', () => {
    const buffer = createLogBuffer(10);
    const written: string[] = [];
    const destination = teeDestination(buffer, { write: (text: string) => written.push(text) });
    destination.write(line({ msg: 'both' }));
    assert.equal(written.length, 1);
    assert.equal(buffer.recent()[0]?.message, 'both');
  });

  it('parses level names', () => {
    assert.equal(parseLogLevel('warn'), 'WARN');
    assert.equal(parseLogLevel('Warning'), 'WARN');
    assert.equal(parseLogLevel('ERROR'), 'ERROR');
    assert.equal(parseLogLevel('loud'), undefined);
  });

  it('rejects a capacity below 1', () => {
    assert.throws(() => createLogBuffer(0), RangeError);
  });
});
