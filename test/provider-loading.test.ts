import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The AI SDK's provider packages are imported when a model of theirs is first built, not at start-up: together they
 * are ~13 MiB of heap that a service whose agents use one provider, or none, need not hold (issue 15). Checked in a
 * process of its own, whose module resolutions are recorded: a started service has resolved none of them, and
 * building an Anthropic model resolves the Anthropic package alone.
 */
const PROVIDER_PACKAGE =
  /\/node_modules\/(@ai-sdk\/(?:amazon-bedrock|anthropic|azure|google|google-vertex|huggingface|mistral|openai|openai-compatible)|ollama-ai-provider-v2)\//;

const script = `
import { registerHooks } from 'node:module';
const loaded = new Set();
const pattern = new RegExp(${JSON.stringify(PROVIDER_PACKAGE.source)});
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const match = pattern.exec(resolved.url);
    if (match) loaded.add(match[1]);
    return resolved;
  },
});
const { withScratchServer } = await import(${JSON.stringify(new URL('../scripts/scratch-server.ts', import.meta.url).href)});
const { ModelRegistry } = await import(${JSON.stringify(new URL('../src/llm/providers.ts', import.meta.url).href)});
const atStart = await withScratchServer(async () => [...loaded]);
await new ModelRegistry({ ollamaBaseUrl: 'http://127.0.0.1:1' }).spec('anthropic', { apiKey: 'test-key' });
console.log(JSON.stringify({ atStart, afterAnthropic: [...loaded].sort() }));
`;

describe('provider packages', () => {
  it('a started service has imported none; building a model imports its own package only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-provider-loading-'));
    const file = join(dir, 'check.mjs');
    writeFileSync(file, script);
    const child = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 120_000 });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(child.status, 0, child.stderr);
    const { atStart, afterAnthropic } = JSON.parse(child.stdout.trim().split('\n').at(-1)!);
    assert.deepEqual(atStart, []);
    assert.deepEqual(afterAnthropic, ['@ai-sdk/anthropic']);
  });
});
