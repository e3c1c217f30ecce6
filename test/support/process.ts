import { spawn, type ChildProcess } from 'node:child_process';

/** The service as a user starts it: `node src/main.ts` in its own process, with the given environment. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the base URL once the service listens (it must be started with SVC_HTTP_PORT=0 or a port). */
  listening(): Promise<string>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `launcher` runs before node with its arguments, e.g. `['prlimit', '--fsize=1000000:unlimited', '--']` (a
 * launcher that execs node keeps the process id: signals and `prlimit --pid` reach the service).
 */
export function startServiceProcess(env: Record<string, string>, launcher: readonly string[] = []): ServiceProcess {
  let output = '';
  const [command, ...args] = [...launcher, process.execPath, 'src/main.ts'];
  const child = spawn(command!, args, {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH ?? '', SVC_HTTP_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    listening: () =>
      waitFor(
        () => /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1],
        'the listening line',
        () => output,
        // Starting takes 25 s and more when several instances start at once on a machine under heavy load
        120_000,
      ),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `probe` until it answers something other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  context: () => string = () => '',
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
