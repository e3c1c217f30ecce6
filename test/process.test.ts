import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

/** The service as a user starts it: `node src/main.ts` in its own process. */
function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the service process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-process-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start on a malformed setting and names it', async () => {
    const { child, output } = startProcess({ SVC_HTTP_PORT: 'abc', SVC_DATASTORE_SQLITE_PATH: join(dir, 'a.db') });
    const [code] = await once(child, 'exit');
    assert.equal(code, 1);
    assert.match(output(), /svc\.http\.port/);
    assert.match(output(), /"abc"/);
  });

  it('finishes an in-flight request on SIGTERM, then exits cleanly', async () => {
    const { child, output } = startProcess({
      SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1', SVC_DATASTORE_SQLITE_PATH: join(dir, 'b.db'), SVC_SOME_UNKNOWN_VARIABLE: 'ignored',
    });
    const port = await waitFor(() => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output())?.[1], 'the listening line');
    const exited = once(child, 'exit');

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ words: [{ word: 'hello', expressions: 'greeting(hello)' }] });
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    let response = '';
    socket.on('data', (chunk) => (response += chunk));
    socket.write(
      `POST /regulardictionarystore/regulardictionaries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    socket.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill('SIGTERM');
    await waitFor(() => (output().includes('SIGTERM received') ? true : undefined), 'the shutdown log line');
    socket.write(body.slice(10));
    await once(socket, 'end');
    assert.match(response, /^HTTP\/1\.1 201/);
    assert.match(response, /location: svc:\/\/ai\.svc\.regulardictionary\//i);

    const [code] = await exited;
    assert.equal(code, 0);
  });
});
