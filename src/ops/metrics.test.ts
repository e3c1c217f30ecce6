import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigResourceStore, Storage } from '../storage/ports.ts';
import { createMetrics, instrumentStorage } from './metrics.ts';
import { stubStorage } from '../../test/support/stub-storage.ts';

function fakeStorage(): Storage & { closed: boolean } {
  const resources = {
    async read(kind: string, id: string, version: number) {
      return id === 'known' ? `{"kind":"${kind}","version":${version}}` : undefined;
    },
    async descriptorById(_id: string) {
      throw new Error('store broken');
    },
    async create() {},
  } as unknown as ConfigResourceStore;
  const storage: Storage & { closed: boolean } = stubStorage({
    resources,
    conversations: {
      async loadRow() {
        return undefined;
      },
    } as unknown as Storage['conversations'],
    closed: false,
    transaction: (work) => work(storage),
    async close() {
      this.closed = true;
    },
  });
  return storage;
}

async function counterValue(
  metrics: ReturnType<typeof createMetrics>,
  labels: Record<string, string>,
): Promise<number> {
  const data = await metrics.storeOperations.get();
  const sample = data.values.find((value) =>
    Object.entries(labels).every(([k, v]) => (value.labels as Record<string, unknown>)[k] === v),
  );
  return sample?.value ?? 0;
}

describe('metrics', () => {
  it('counts storage calls by kind, operation and outcome and delegates unchanged', async () => {
    const metrics = createMetrics();
    const storage = fakeStorage();
    const instrumented = instrumentStorage(storage, metrics);

    assert.equal(instrumented.type, 'sqlite');
    assert.equal(await instrumented.resources.read('dictionary', 'known', 2), '{"kind":"dictionary","version":2}');
    assert.equal(await instrumented.resources.read('dictionary', 'unknown', 1), undefined);
    await instrumented.resources.create({
      kind: 'agent',
      id: 'x',
      bodyJson: '{}',
      now: 1,
      name: '',
      description: '',
      origin: {},
    });
    await assert.rejects(instrumented.resources.descriptorById('x'), /store broken/);
    await instrumented.ping();
    await instrumented.close();
    assert.equal(storage.closed, true, 'close runs on the original object');

    assert.equal(await counterValue(metrics, { kind: 'dictionary', operation: 'read', outcome: 'ok' }), 2);
    assert.equal(await counterValue(metrics, { kind: 'agent', operation: 'create', outcome: 'ok' }), 1);
    assert.equal(await counterValue(metrics, { kind: 'any', operation: 'descriptorById', outcome: 'error' }), 1);
    assert.equal(await counterValue(metrics, { operation: 'descriptorById', outcome: 'ok' }), 0);

    await instrumented.conversations.loadRow('c');
    assert.equal(await counterValue(metrics, { kind: 'conversations', operation: 'loadRow', outcome: 'ok' }), 1);

    await instrumented.transaction(async (tx) => {
      await tx.resources.create({
        kind: 'agent',
        id: 'y',
        bodyJson: '{}',
        now: 1,
        name: '',
        description: '',
        origin: {},
      });
      await tx.conversations.loadRow('c');
    });
    assert.equal(
      await counterValue(metrics, { kind: 'agent', operation: 'create', outcome: 'ok' }),
      2,
      'writes in a transaction are counted',
    );
    assert.equal(await counterValue(metrics, { kind: 'conversations', operation: 'loadRow', outcome: 'ok' }), 2);
  });

  it('exposes the Prometheus text with its own registry', async () => {
    const first = createMetrics();
    const second = createMetrics();
    assert.notEqual(first.registry, second.registry);
    first.storeOperations.inc({ kind: 'agent', operation: 'read', outcome: 'ok' });
    first.observeHttpRequest('GET', '/agents/:agentId', 200, 0.012);
    first.observeHttpRequest('GET', undefined, 404, 0.001);
    const { contentType, body } = await first.exposition();
    assert.match(contentType, /^text\/plain/);
    assert.match(body, /svc_store_operations_total\{kind="agent",operation="read",outcome="ok"\} 1/);
    assert.match(
      body,
      /svc_http_server_requests_seconds_count\{method="GET",route="\/agents\/:agentId",status="200"\} 1/,
    );
    assert.match(body, /svc_http_server_requests_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    assert.match(body, /svc_process_cpu_seconds_total/);
    const other = await second.exposition();
    assert.doesNotMatch(other.body, /svc_store_operations_total\{/);
  });
});
