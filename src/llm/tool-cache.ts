/**
 * Results of tool calls, cached per tool and arguments for a time-to-live that depends on the tool (reference
 * §9.5 defaults; adjustable per tool). Bounded: the oldest entries go first.
 */

export const DEFAULT_TTL_SECONDS: Readonly<Record<string, number>> = {
  weather: 300,
  websearch: 1800,
  news: 600,
  webscraper: 3600,
  fetch_page: 3600,
  pdfreader: 86_400,
  calculator: 604_800,
  datetime: 60,
  dataformatter: 86_400,
  textsummarizer: 86_400,
};
export const FALLBACK_TTL_SECONDS = 300;

export interface CacheStats {
  readonly size: number;
  readonly maxSize: number;
  readonly hits: number;
  readonly misses: number;
  readonly hitRate: number;
  readonly evictions: number;
  /** Entries per tool. */
  readonly entriesByTool: Record<string, number>;
}

export interface TtlInfo {
  readonly tool: string;
  readonly ttlSeconds: number;
  /** True when the TTL was set through the API rather than taken from the defaults. */
  readonly overridden: boolean;
}

interface Entry {
  readonly tool: string;
  readonly value: string;
  readonly expiresAt: number;
}

export class ToolCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlOverrides = new Map<string, number>();
  readonly #maxSize: number;
  readonly #clock: () => number;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  constructor(options: { maxSize?: number; clock?: () => number } = {}) {
    this.#maxSize = options.maxSize ?? 10_000;
    this.#clock = options.clock ?? Date.now;
  }

  static keyOf(tool: string, args: unknown): string {
    return `${tool}\u0000${canonicalJson(args)}`;
  }

  get(tool: string, args: unknown): string | undefined {
    const key = ToolCache.keyOf(tool, args);
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > this.#clock()) {
      this.#hits++;
      return entry.value;
    }
    if (entry) this.#entries.delete(key);
    this.#misses++;
    return undefined;
  }

  put(tool: string, args: unknown, value: string): void {
    const ttlSeconds = this.ttl(tool).ttlSeconds;
    if (ttlSeconds <= 0) return;
    const key = ToolCache.keyOf(tool, args);
    this.#entries.delete(key);
    this.#entries.set(key, { tool, value, expiresAt: this.#clock() + ttlSeconds * 1000 });
    while (this.#entries.size > this.#maxSize) {
      this.#entries.delete(this.#entries.keys().next().value!);
      this.#evictions++;
    }
  }

  clear(): void {
    this.#entries.clear();
    this.#hits = 0;
    this.#misses = 0;
    this.#evictions = 0;
  }

  ttl(tool: string): TtlInfo {
    const override = this.#ttlOverrides.get(tool);
    return override === undefined
      ? { tool, ttlSeconds: DEFAULT_TTL_SECONDS[tool] ?? FALLBACK_TTL_SECONDS, overridden: false }
      : { tool, ttlSeconds: override, overridden: true };
  }

  /** Sets the TTL of a tool (0 = do not cache); its cached entries are dropped so the new TTL applies at once. */
  setTtl(tool: string, ttlSeconds: number): TtlInfo {
    this.#ttlOverrides.set(tool, ttlSeconds);
    for (const [key, entry] of this.#entries) if (entry.tool === tool) this.#entries.delete(key);
    return this.ttl(tool);
  }

  stats(): CacheStats {
    const now = this.#clock();
    const entriesByTool: Record<string, number> = {};
    let size = 0;
    for (const entry of this.#entries.values()) {
      if (entry.expiresAt <= now) continue;
      size++;
      entriesByTool[entry.tool] = (entriesByTool[entry.tool] ?? 0) + 1;
    }
    const lookups = this.#hits + this.#misses;
    return { size, maxSize: this.#maxSize, hits: this.#hits, misses: this.#misses, hitRate: lookups === 0 ? 0 : this.#hits / lookups, evictions: this.#evictions, entriesByTool };
  }
}

/** JSON with object keys sorted, so equal arguments give equal cache keys. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
