import { LRUCache } from 'lru-cache';
import { canonicalJson } from '../shared/json.ts';

/**
 * Results of tool calls, cached per tool and arguments for a time-to-live that depends on the tool (reference
 * §9.5 defaults; adjustable per tool). Bounded: the least recently used entries go first.
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
  // A knowledge base changes with every ingestion, and one name serves every task's knowledge bases.
  search_knowledge_base: 0,
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
}

export class ToolCache {
  readonly #entries: LRUCache<string, Entry>;
  readonly #ttlOverrides = new Map<string, number>();
  readonly #maxSize: number;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  constructor(options: { maxSize?: number; clock?: () => number } = {}) {
    this.#maxSize = options.maxSize ?? 10_000;
    this.#entries = new LRUCache<string, Entry>({
      max: this.#maxSize,
      ttlResolution: 0,
      perf: { now: options.clock ?? Date.now },
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') this.#evictions++;
      },
    });
  }

  static keyOf(tool: string, args: unknown): string {
    return `${tool}\u0000${canonicalJson(args)}`;
  }

  get(tool: string, args: unknown): string | undefined {
    const entry = this.#entries.get(ToolCache.keyOf(tool, args));
    if (entry === undefined) this.#misses++;
    else this.#hits++;
    return entry?.value;
  }

  put(tool: string, args: unknown, value: string): void {
    const ttlSeconds = this.ttl(tool).ttlSeconds;
    if (ttlSeconds <= 0) return;
    this.#entries.set(ToolCache.keyOf(tool, args), { tool, value }, { ttl: ttlSeconds * 1000 });
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
    const keys = [...this.#entries.entries()].filter(([, entry]) => entry.tool === tool).map(([key]) => key);
    for (const key of keys) this.#entries.delete(key);
    return this.ttl(tool);
  }

  /** Counts live entries only (an expired entry may still be held until it is looked up or pushed out). */
  stats(): CacheStats {
    const entriesByTool: Record<string, number> = {};
    let size = 0;
    for (const entry of this.#entries.values()) {
      size++;
      entriesByTool[entry.tool] = (entriesByTool[entry.tool] ?? 0) + 1;
    }
    const lookups = this.#hits + this.#misses;
    return {
      size,
      maxSize: this.#maxSize,
      hits: this.#hits,
      misses: this.#misses,
      hitRate: lookups === 0 ? 0 : this.#hits / lookups,
      evictions: this.#evictions,
      entriesByTool,
    };
  }
}
