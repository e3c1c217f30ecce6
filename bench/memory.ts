import { readFileSync } from 'node:fs';
import { setTimeout } from 'node:timers/promises';
import { buildBenchmarkAgent, deployAgent } from './agent.ts';
import { benchApi, expectStatus, type BenchApi } from './api.ts';
import type { LoadSpec } from './measure.ts';
import { residentBytes, startService, type BenchProcess } from './processes.ts';
import { openBenchStore, serviceEnvironment } from './store.ts';

const CONNECTIONS = 16;
const WARM_UP_STARTS = 100;
const MiB = 2 ** 20;

/** Where a process's resident memory is, in MiB: its own (anonymous) pages, file pages, and V8's heap. */
export interface MemoryBreakdown {
  readonly rssMiB: number;
  /** Anonymous pages: the V8 heap, malloc'd memory (SQLite's page cache, buffers), thread stacks. */
  readonly anonymousMiB: number;
  /** File-backed pages: the executable, libraries, and the store's mapped `-shm` file. */
  readonly fileMiB: number;
  /** V8's heap as the service's own metrics report it (`svc_nodejs_heap_size_*`). */
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  /** Memory V8 knows of outside its heap (Buffers, ArrayBuffers). */
  readonly externalMiB: number;
}

export interface MemoryOfConversations {
  readonly conversations: number;
  readonly rssBeforeMiB: number;
  readonly rssAfterMiB: number;
  readonly addedMiB: number;
  readonly before: MemoryBreakdown;
  readonly after: MemoryBreakdown;
}

/**
 * RSS a fresh service (its own store) adds while `conversations` conversations are started and used once each
 * over 16 connections: what stays is the bounded conversation cache, the store's page cache and the heap's growth.
 * `load` runs a fixed number of requests against the service (the orchestrator's, which records problems).
 * `serviceEnv` adds variables to the service's environment (e.g. `NODE_OPTIONS` for a diagnostic preload).
 */
export async function memoryOfConversations(
  conversations: number,
  load: (service: BenchProcess, spec: LoadSpec, name: string) => Promise<unknown>,
  serviceEnv: Record<string, string> = {},
): Promise<MemoryOfConversations> {
  const store = await openBenchStore();
  const service = await startService({ ...serviceEnvironment(store), ...serviceEnv });
  try {
    const api = benchApi(service.url);
    const agentId = await buildBenchmarkAgent(api);
    await deployAgent(api, agentId);
    for (let n = 0; n < WARM_UP_STARTS; n++) {
      expectStatus(await api.post(`/agents/${agentId}/start`), 201, 'start a conversation');
    }
    const before = await breakdown(api, service.pid);
    const rssBefore = residentBytes(service.pid);
    await load(
      service,
      { connections: CONNECTIONS, amount: conversations, paths: [`/agents/${agentId}/start`] },
      'memory',
    );
    await setTimeout(1000);
    const rssAfter = residentBytes(service.pid);
    const after = await breakdown(api, service.pid);
    return {
      conversations,
      rssBeforeMiB: rssBefore / MiB,
      rssAfterMiB: rssAfter / MiB,
      addedMiB: (rssAfter - rssBefore) / MiB,
      before,
      after,
    };
  } finally {
    await service.stop();
    await store.dispose();
  }
}

async function breakdown(api: BenchApi, pid: number): Promise<MemoryBreakdown> {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? Number.NaN);
  const metrics = expectStatus(await api.get('/q/metrics'), 200, 'read the metrics').text;
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN);
  return {
    rssMiB: kib('Rss') / 1024,
    anonymousMiB: kib('Anonymous') / 1024,
    fileMiB: (kib('Rss') - kib('Anonymous')) / 1024,
    heapUsedMiB: gauge('svc_nodejs_heap_size_used_bytes') / MiB,
    heapTotalMiB: gauge('svc_nodejs_heap_size_total_bytes') / MiB,
    externalMiB: gauge('svc_nodejs_external_memory_bytes') / MiB,
  };
}
