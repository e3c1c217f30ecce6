import type { client } from './http.ts';

/**
 * Reads samples from a Prometheus text exposition: the value of `name` whose labels include every given label
 * (summed over the samples that match; 0 when none does).
 */
export function sampleValue(exposition: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map<string, string>();
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) present.set(key!, value!);
    if (Object.entries(labels).every(([key, value]) => present.get(key) === value)) total += Number(match[3]);
  }
  return total;
}

/** The metric names (families) an exposition declares with `# TYPE`. */
export function metricFamilies(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(name!, type!);
  return families;
}

/** `GET /q/metrics` as text. */
export async function scrape(api: ReturnType<typeof client>): Promise<string> {
  const answer = await api.get('/q/metrics');
  if (answer.status !== 200) throw new Error(`GET /q/metrics answered ${answer.status}: ${answer.text}`);
  return answer.text;
}
