/**
 * `npm run bench:memory`: the memory goal of `npm run bench` alone (about a minute or two): a fresh service on its
 * own store, `BENCH_MEMORY_CONVERSATIONS` (100,000) conversations started once each over 16 connections, and the
 * RSS they add, with where the resident memory is before and after. `BENCH_MEMORY_NODE_OPTIONS` passes
 * `NODE_OPTIONS` to the service (e.g. `--import ./diagnostic.mjs`).
 */
import { runLoad } from './load.ts';
import { measurementProblem } from './measure.ts';
import { memoryOfConversations } from './memory.ts';
import { LOAD_CORE, pinThisProcess } from './processes.ts';

const conversations = Number(process.env.BENCH_MEMORY_CONVERSATIONS ?? 100_000);
const nodeOptions = process.env.BENCH_MEMORY_NODE_OPTIONS;
pinThisProcess(LOAD_CORE);

const problems: string[] = [];
const result = await memoryOfConversations(
  conversations,
  async (service, spec, name) => {
    const measurement = await runLoad(service.url, spec);
    const problem = measurementProblem(measurement);
    if (problem !== undefined) problems.push(`${name}: ${problem}`);
    return measurement;
  },
  nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions },
);
const row = (name: string, figures: Record<string, number>) =>
  `${name.padEnd(7)} ${Object.entries(figures)
    .map(([key, value]) => `${key} ${value.toFixed(0)}`)
    .join(', ')}`;
console.log(row('before', { ...result.before }));
console.log(row('after', { ...result.after }));
console.log(
  `${result.addedMiB <= 300 ? 'met' : 'MISSED'}  Memory added by ${conversations} conversations: ${result.addedMiB.toFixed(1)} MiB RSS (target <= 300); ` +
    `${result.rssBeforeMiB.toFixed(0)} MiB before, ${result.rssAfterMiB.toFixed(0)} MiB after`,
);
if (problems.length > 0) {
  console.error(`bench: problems:\n  ${problems.join('\n  ')}`);
  process.exitCode = 1;
}
