/** Prometheus text exposition -> a few numbers for the dashboard. Pure. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    const value = Number(m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : m[4]);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

export interface KeyMetrics {
  /** HTTP requests served since start. */
  readonly requests: number;
  /** Of those, answered 5xx. */
  readonly serverErrors: number;
  /** Of those, answered 4xx. */
  readonly clientErrors: number;
  /** Mean request duration, milliseconds (undefined without requests). */
  readonly meanLatencyMs?: number;
  /** Resident memory, bytes. */
  readonly residentBytes?: number;
  /** Seconds since the process started (against `nowSeconds`). */
  readonly uptimeSeconds?: number;
  /** Conversation messages (POST /agents/{id}) served. */
  readonly messages: number;
}

const sum = (samples: readonly Sample[]) => samples.reduce((t, s) => t + (Number.isFinite(s.value) ? s.value : 0), 0);

export function keyMetrics(samples: readonly Sample[], nowSeconds: number): KeyMetrics {
  const counts = samples.filter((s) => s.name === 'svc_http_server_requests_seconds_count');
  const sums = samples.filter((s) => s.name === 'svc_http_server_requests_seconds_sum');
  const status = (s: Sample) => Number(s.labels.status ?? 0);
  const requests = sum(counts);
  const start = samples.find((s) => s.name === 'svc_process_start_time_seconds')?.value;
  const resident = samples.find((s) => s.name === 'svc_process_resident_memory_bytes')?.value;
  return {
    requests,
    serverErrors: sum(counts.filter((s) => status(s) >= 500)),
    clientErrors: sum(counts.filter((s) => status(s) >= 400 && status(s) < 500)),
    meanLatencyMs: requests > 0 ? (sum(sums) / requests) * 1000 : undefined,
    residentBytes: resident,
    uptimeSeconds: start !== undefined ? Math.max(0, nowSeconds - start) : undefined,
    messages: sum(
      counts.filter(
        (s) =>
          s.labels.method === 'POST' &&
          /^\/agents\/[^/]+$/.test(s.labels.route ?? '') &&
          !/start/.test(s.labels.route ?? ''),
      ),
    ),
  };
}

export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}
