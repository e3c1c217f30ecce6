import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes, formatDuration, keyMetrics, parsePrometheus } from './metrics.ts';
import { groupStep } from './steps.ts';
import { idOfLocation, parseResourceUri } from './uri.ts';

describe('metrics', () => {
  const text = [
    '# HELP svc_http_server_requests_seconds HTTP',
    'svc_http_server_requests_seconds_count{method="GET",route="/q/metrics",status="200"} 3',
    'svc_http_server_requests_seconds_count{method="POST",route="/agents/:conversationId",status="200"} 4',
    'svc_http_server_requests_seconds_count{method="GET",route="/x",status="503"} 1',
    'svc_http_server_requests_seconds_count{method="GET",route="/y",status="404"} 2',
    'svc_http_server_requests_seconds_sum{method="GET",route="/q/metrics",status="200"} 0.5',
    'svc_process_start_time_seconds 1000',
    'svc_process_resident_memory_bytes 1048576',
  ].join('\n');

  it('parses samples and labels', () => {
    const samples = parsePrometheus(text);
    assert.equal(samples.length, 7);
    assert.deepEqual(samples[0]!.labels, { method: 'GET', route: '/q/metrics', status: '200' });
  });

  it('sums the key figures', () => {
    const m = keyMetrics(parsePrometheus(text), 1060);
    assert.equal(m.requests, 10);
    assert.equal(m.serverErrors, 1);
    assert.equal(m.clientErrors, 2);
    assert.equal(m.messages, 4);
    assert.equal(m.uptimeSeconds, 60);
    assert.equal(m.meanLatencyMs, 50);
    assert.equal(formatBytes(m.residentBytes!), '1.0 MiB');
    assert.equal(formatDuration(3700), '1 h 1 min');
  });
});

describe('resource references and steps', () => {
  it('parses svc URIs and Locations', () => {
    assert.deepEqual(parseResourceUri('svc://ai.svc.agent/agentstore/agents/abc?version=2'), {
      type: 'agent',
      storePath: '/agentstore/agents',
      id: 'abc',
      version: 2,
    });
    assert.equal(parseResourceUri('http://x'), undefined);
    assert.equal(idOfLocation('svc://ai.svc.conversation/conversationstore/conversations/0123'), '0123');
    assert.equal(idOfLocation('/backup/export/a-1.zip'), 'a-1.zip');
  });

  it('groups step entries', () => {
    const groups = groupStep([
      { key: 'input:initial', value: 'hi' },
      { key: 'actions', value: ['greet'] },
      { key: 'output:text:greet', value: {} },
      { key: 'weird', value: 1 },
    ]);
    assert.deepEqual(
      groups.map((g) => g.title),
      ['Input', 'Actions', 'Output', 'Other'],
    );
  });
});
