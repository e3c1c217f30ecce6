import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { setTimeout } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startCommand } from '../scripts/start-command.ts';

/**
 * The bench's processes, each pinned to one core with `taskset` (util-linux) when the machine has it and more
 * than one core: the servers under test share core 0, the load generator and this orchestrator use core 1, so
 * the load generator never takes the measured server's CPU.
 */
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const canPin = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** `command args` prefixed so that it runs on `core` only (unchanged when pinning is not possible). */
export function onCore(core: number, command: string, args: readonly string[]): [string, string[]] {
  return canPin ? ['taskset', ['-c', String(core), command, ...args]] : [command, [...args]];
}

/** Moves this process (the orchestrator, which also sets agents up over HTTP) to the load generator's core. */
export function pinThisProcess(core: number): boolean {
  return canPin && spawnSync('taskset', ['-cp', String(core), String(process.pid)]).status === 0;
}

export interface BenchProcess {
  readonly url: string;
  readonly pid: number;
  /** Everything the process wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node <nodeOptions> <script>` (a path relative to the project) on `core`, listening on a free loopback port that this
 * process picks and passes in `portVariable`, and resolves once the port accepts connections (so the service can
 * run at log level `warn`, without a start line to wait for).
 */
export async function startPinned(
  script: string,
  env: Record<string, string>,
  {
    core = SERVER_CORE,
    portVariable = 'SVC_HTTP_PORT',
    nodeOptions = [] as readonly string[],
  }: { core?: number; portVariable?: string; nodeOptions?: readonly string[] } = {},
): Promise<BenchProcess> {
  const port = await freePort();
  const [command, args] = onCore(core, process.execPath, [...nodeOptions, script]);
  const child = spawn(command, args, {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, [portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    // Keeps the start and the latest lines: enough to explain a failure without growing for the whole run.
    if (output.length > 1_000_000) output = output.slice(0, 100_000) + output.slice(-100_000);
    output += chunk.toString('utf8');
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening:\n${output}`))),
  );
  exited.catch(() => {});
  await Promise.race([accepting(port), exited]);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    output: () => output,
    stop: () => stopChild(child),
  };
}

/**
 * Starts the service on `core` as `npm start` does (its Node options, then its script), with `nodeOptions` added
 * for a study (a preload, a profiler, V8 tracing).
 */
export function startService(
  env: Record<string, string>,
  {
    core = SERVER_CORE,
    nodeOptions = [] as readonly string[],
  }: { core?: number; nodeOptions?: readonly string[] } = {},
): Promise<BenchProcess> {
  const { nodeOptions: startOptions, script } = startCommand();
  return startPinned(script, env, { core, nodeOptions: [...startOptions, ...nodeOptions] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function accepting(port: number): Promise<void> {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await setTimeout(50);
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The resident set size of a process (Linux `/proc`), in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}
