import type { ToolMeters } from '../ops/domain-metrics.ts';
import { LRUCache } from 'lru-cache';
import { CostTracker } from './cost-tracker.ts';
import type { RateLimitStore } from '../storage/rate-limit-ports.ts';
import { modelCost, toolCallCost } from './prices.ts';
import { ToolRateLimiter } from './rate-limiter.ts';
import { ToolCache } from './tool-cache.ts';

/**
 * The tool infrastructure of the LLM tasks, in memory per instance (reference §9.5): a result cache with TTLs per
 * tool, a token-bucket rate limit per tool, cost tracking per tool, model and conversation, and the history of
 * tool calls per conversation. Tools become known when they are registered (the built-in ones at start-up, the
 * HTTP-call tools when an agent offers them).
 */

export interface ToolCallRecord {
  readonly tool: string;
  readonly conversationId: string;
  readonly arguments: unknown;
  /** The result handed to the model (an error text when `error` is set). */
  readonly result: string;
  readonly cached: boolean;
  readonly rateLimited: boolean;
  readonly error?: string;
  readonly cost: number;
  readonly durationMs: number;
  readonly timestamp: number;
}

export interface ToolHistoryOptions {
  readonly defaultRateLimitPerMinute: number;
  readonly knownTools?: readonly string[];
  readonly clock?: () => number;
  /** Calls kept per conversation (oldest dropped first). */
  readonly historyPerConversation?: number;
  /** Where the tools' rate-limit buckets live (the store, shared by every instance); in memory when absent. */
  readonly rateLimitStore?: RateLimitStore | undefined;
  /** Tool calls and cache hits as metrics. */
  readonly meters?: ToolMeters | undefined;
}

const MAX_CONVERSATIONS = 10_000;

export class ToolHistory {
  readonly cache: ToolCache;
  readonly rateLimits: ToolRateLimiter;
  readonly costs = new CostTracker();
  readonly #known = new Set<string>();
  readonly #history = new LRUCache<string, ToolCallRecord[]>({ max: MAX_CONVERSATIONS });
  readonly #historyLimit: number;
  readonly #clock: () => number;
  readonly #meters: ToolMeters | undefined;

  constructor(options: ToolHistoryOptions) {
    this.#clock = options.clock ?? Date.now;
    this.#meters = options.meters;
    this.cache = new ToolCache({ clock: this.#clock });
    this.rateLimits = new ToolRateLimiter({
      store: options.rateLimitStore,
      defaultLimitPerMinute: options.defaultRateLimitPerMinute,
      clock: this.#clock,
    });
    this.#historyLimit = options.historyPerConversation ?? 500;
    for (const tool of options.knownTools ?? []) this.#known.add(tool);
  }

  registerTool(tool: string): void {
    this.#known.add(tool);
  }

  isKnown(tool: string): boolean {
    return this.#known.has(tool);
  }

  get knownTools(): string[] {
    return [...this.#known].sort();
  }

  now(): number {
    return this.#clock();
  }

  /** Records a finished tool call: history and costs (a cached or refused call costs nothing). */
  recordToolCall(call: Omit<ToolCallRecord, 'cost' | 'timestamp'>): ToolCallRecord {
    const cost = call.cached || call.rateLimited ? 0 : toolCallCost(call.tool);
    const record: ToolCallRecord = { ...call, cost, timestamp: this.#clock() };
    this.costs.recordToolCall(call.conversationId, call.tool, cost);
    this.#meters?.callFinished(
      call.tool,
      call.cached ? 'cached' : call.rateLimited ? 'rate_limited' : call.error === undefined ? 'ok' : 'error',
    );
    let list = this.#history.get(call.conversationId);
    if (!list) {
      list = [];
      this.#history.set(call.conversationId, list);
    }
    list.push(record);
    if (list.length > this.#historyLimit) list.splice(0, list.length - this.#historyLimit);
    return record;
  }

  /** Records the token usage of a model call; returns its cost. */
  recordModelCall(
    conversationId: string,
    provider: string,
    model: string,
    inputTokens: number,
    outputTokens: number,
  ): number {
    const cost = modelCost(model, inputTokens, outputTokens);
    this.costs.recordModelCall(conversationId, `${provider}:${model}`, inputTokens, outputTokens, cost);
    return cost;
  }

  history(conversationId: string): readonly ToolCallRecord[] {
    return this.#history.get(conversationId) ?? [];
  }
}
