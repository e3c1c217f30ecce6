import { readFileSync } from 'node:fs';

/**
 * How the service is started, from one place: `npm start` (package.json), `node <flags> <entry>`. The Dockerfile's
 * CMD (checked by test/deployment.test.ts), the tests that run the service as its own process and the benchmarks
 * start it with the same arguments, so that what they measure is what a user runs.
 *
 * The flag is V8's young-generation size (`--max-semi-space-size`, MiB): V8 grows it to 32 MiB under load, and each
 * young collection then copies what survived ~400 ms of turns in one pause of 7-15 ms; at 8 MiB collections come
 * about eight times as often and almost all stay under 2 ms (issue 15's latency goal). It cannot be set once the
 * process runs.
 */
export function serviceCommand(): { readonly nodeFlags: readonly string[]; readonly entry: string } {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = packageJson.scripts.start!.trim().split(/\s+/);
  const entry = words.at(-1)!;
  if (words[0] !== 'node' || !entry.endsWith('.ts') || words.slice(1, -1).some((word) => !word.startsWith('--')))
    throw new Error(
      `package.json: "start" must be "node [--flag ...] <entry>.ts", not ${JSON.stringify(words.join(' '))}`,
    );
  return { nodeFlags: words.slice(1, -1), entry };
}
