import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadSpec, Measurement } from './measure.ts';
import { LOAD_CORE, onCore } from './processes.ts';

/**
 * The load generator, always in another process than the servers, on the load core: wrk when the machine has it
 * (`apt-get install wrk`; it drives far more requests per second from one core than a JavaScript generator, so the
 * echo server's figure is the echo server's, not the generator's), else autocannon in a child process; fixed
 * request counts always use autocannon.
 *
 * A rate is paced evenly with wrk: each connection waits `connections ÷ rate` between an answer and its next
 * request. autocannon's rate is a quota per connection and second instead: the connections send as fast as answers
 * come until the second's quota is used, then pause, and its latency histogram adds corrected values for an
 * expected interval of 1 ms; a paced latency from autocannon is therefore a burst's latency (read it with care).
 */
export const generator = spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon';

export async function runLoad(baseUrl: string, spec: LoadSpec): Promise<Measurement> {
  const useWrk = generator === 'wrk' && spec.amount === undefined;
  return useWrk ? runWrk(baseUrl, spec) : runAutocannon(baseUrl, spec);
}

async function runAutocannon(baseUrl: string, spec: LoadSpec): Promise<Measurement> {
  const script = fileURLToPath(new URL('autocannon-main.ts', import.meta.url));
  const output = await run(...onCore(LOAD_CORE, process.execPath, [script, baseUrl, JSON.stringify(spec)]));
  return JSON.parse(output.trim().split('\n').at(-1)!) as Measurement;
}

/** wrk's Lua hooks: paths (and bodies) round-robin, and a JSON summary line (latencies in microseconds) when done. */
function wrkScript(spec: LoadSpec): string {
  const luaList = (texts: readonly string[]) => `{ ${texts.map((text) => JSON.stringify(text)).join(', ')} }`;
  const hasBody = spec.body !== undefined || spec.bodies !== undefined;
  return `
local paths = ${luaList(spec.paths)}
local bodies = ${luaList(spec.bodies ?? [])}
local next = 0
wrk.method = "POST"
${spec.body === undefined ? '' : `wrk.body = ${JSON.stringify(spec.body)}`}
${hasBody ? 'wrk.headers["Content-Type"] = "application/json"' : ''}
${spec.rate === undefined ? '' : pacing(spec.connections, spec.rate)}
request = function()
  next = next + 1
  local body = nil
  if #bodies > 0 then body = bodies[(next % #bodies) + 1] end
  return wrk.format(nil, paths[(next % #paths) + 1], nil, body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests":%d,"micros":%d,"non2xx":%d,"errors":%d,"timeouts":%d,"mean":%f,"p50":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(99), latency.max))
end
`;
}

/**
 * wrk's `delay` hook (whole milliseconds before each request): `connections ÷ rate` seconds on average, the
 * fractions carried over, so the connections together offer about `rate` requests a second (a little less, as
 * each also waits for its answer).
 */
function pacing(connections: number, rate: number): string {
  return `
local interval = ${(connections * 1000) / rate}
local owed = 0
delay = function()
  owed = owed + interval
  local whole = math.floor(owed)
  owed = owed - whole
  return whole
end`;
}

async function runWrk(baseUrl: string, spec: LoadSpec): Promise<Measurement> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    await writeFile(script, wrkScript(spec));
    const wrk = (seconds: number) =>
      run(
        ...onCore(LOAD_CORE, 'wrk', [
          '-t1',
          `-c${spec.connections}`,
          `-d${Math.max(1, Math.round(seconds))}s`,
          '--timeout',
          '10s',
          '-s',
          script,
          baseUrl,
        ]),
      );
    if (spec.warmupSeconds) await wrk(spec.warmupSeconds);
    const output = await wrk(spec.duration ?? 5);
    const line = /^WRK (.*)$/m.exec(output)?.[1];
    if (line === undefined) throw new Error(`wrk printed no summary:\n${output}`);
    const raw = JSON.parse(line) as Record<string, number>;
    const seconds = raw.micros! / 1e6;
    const ok = raw.requests! - raw.non2xx!;
    return {
      requests: ok,
      seconds,
      reqPerSec: ok / seconds,
      latencyMs: { mean: raw.mean! / 1000, p50: raw.p50! / 1000, p99: raw.p99! / 1000, max: raw.max! / 1000 },
      non2xx: raw.non2xx!,
      errors: raw.errors!,
      timeouts: raw.timeouts!,
      statusCodes: {},
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')} failed (${code}):\n${stderr}`)),
    );
  });
}
