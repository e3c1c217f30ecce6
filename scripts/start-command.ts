import { readFileSync } from 'node:fs';

/**
 * The command `npm start` runs (package.json's `start` script, the one place it is written): `node`, its options,
 * then the entry script. The container image runs the same (a test holds the Dockerfile to it) and the benchmarks
 * start the service with the same options, so that what they measure is what a user starts.
 */
export function startCommand(): { readonly nodeOptions: readonly string[]; readonly script: string } {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  const [node, ...rest] = packageJson.scripts.start.trim().split(/\s+/);
  const script = rest.pop();
  if (node !== 'node' || script === undefined || rest.some((word) => !word.startsWith('--')))
    throw new Error(`package.json's start script is not "node [--option ...] <script>": ${packageJson.scripts.start}`);
  return { nodeOptions: rest, script };
}
