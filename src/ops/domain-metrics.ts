import { Gauge, type Registry } from 'prom-client';
import { HotCounter, HotHistogram, type HotCounterChild, type HotHistogramChild } from './hot-meters.ts';

/**
 * The domain meters: what an operator watches besides HTTP and process figures. Each group is created once per
 * `Metrics` (one registry per server) and handed to the feature it measures. Labels are bounded: agent ids (bounded by
 * deployments), task types, providers and models, tool names, outcomes; never a conversation or user id.
 *
 * Meters on the turn path keep pre-bound label children per agent (or task type), so a turn does a map lookup and an
 * increment, no label string building.
 */

/** How a turn ended: the conversation state it left, or `TIMEOUT` (the turn ran past the turn timeout, 408). */
export type TurnOutcome = 'READY' | 'ERROR' | 'ENDED' | 'AWAITING_HUMAN' | 'TIMEOUT';

const TURN_OUTCOMES: readonly TurnOutcome[] = ['READY', 'ERROR', 'ENDED', 'AWAITING_HUMAN', 'TIMEOUT'];

/** Turn and task durations (seconds): from a millisecond rule-based turn to a minute-long LLM turn. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

type CounterChild = HotCounterChild;
type HistogramChild = HotHistogramChild;

interface AgentChildren {
  readonly turns: Record<TurnOutcome, CounterChild>;
  readonly duration: HistogramChild;
  readonly started: CounterChild;
}

/** Turns, their durations and conversations started, per agent; the coordinator's queue and waits. */
export class ConversationMeters {
  readonly turns: HotCounter<'agent_id' | 'outcome'>;
  readonly turnDuration: HotHistogram<'agent_id'>;
  readonly started: HotCounter<'agent_id'>;
  readonly coordinatorWait: HotHistogram;
  readonly #byAgent = new Map<string, AgentChildren>();
  readonly #coordinatorWait: HistogramChild;
  #activity: ConversationActivity | undefined;

  constructor(registers: Registry[]) {
    this.turns = new HotCounter({
      name: 'svc_conversation_turns_total',
      help: 'Conversation turns by agent and outcome (READY, ERROR, ENDED, AWAITING_HUMAN, TIMEOUT)',
      labelNames: ['agent_id', 'outcome'],
      registers,
    });
    this.turnDuration = new HotHistogram({
      name: 'svc_conversation_turn_duration_seconds',
      help: 'Duration of conversation turns (all tasks of the pipeline) by agent',
      labelNames: ['agent_id'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.started = new HotCounter({
      name: 'svc_conversations_started_total',
      help: 'Conversations started by agent',
      labelNames: ['agent_id'] as const,
      registers,
    });
    this.coordinatorWait = new HotHistogram({
      name: 'svc_coordinator_wait_seconds',
      help: "Time a conversation's work waited in the coordinator's queue behind earlier work of the same conversation",
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
      registers,
    });
    this.#coordinatorWait = this.coordinatorWait.labels();
    const meters = this;
    new Gauge({
      name: 'svc_conversations_active',
      help: 'Conversations with a turn on this instance in the last 5 minutes that are not ended',
      registers,
      collect() {
        this.set(meters.#activity?.activeConversations() ?? 0);
      },
    });
    new Gauge({
      name: 'svc_coordinator_conversations',
      help: 'Conversations with queued or running work in the coordinator',
      registers,
      collect() {
        this.set(meters.#activity?.coordinator().conversations ?? 0);
      },
    });
    new Gauge({
      name: 'svc_coordinator_queue_depth',
      help: 'Work items (turns, undo, end, ...) queued or running in the coordinator',
      registers,
      collect() {
        this.set(meters.#activity?.coordinator().queued ?? 0);
      },
    });
  }

  /** Where the gauges read the live figures (the conversation service). */
  observe(activity: ConversationActivity): void {
    this.#activity = activity;
  }

  turnFinished(agentId: string, outcome: TurnOutcome, seconds: number): void {
    const children = this.#children(agentId);
    children.turns[outcome].inc();
    children.duration.observe(seconds);
  }

  coordinatorWaited(seconds: number): void {
    this.#coordinatorWait.observe(seconds);
  }

  conversationStarted(agentId: string): void {
    this.#children(agentId).started.inc();
  }

  #children(agentId: string): AgentChildren {
    let children = this.#byAgent.get(agentId);
    if (children === undefined) {
      const turns = {} as Record<TurnOutcome, CounterChild>;
      for (const outcome of TURN_OUTCOMES) turns[outcome] = this.turns.labels(agentId, outcome);
      children = { turns, duration: this.turnDuration.labels(agentId), started: this.started.labels(agentId) };
      this.#byAgent.set(agentId, children);
    }
    return children;
  }
}

/** What the conversation gauges read when scraped. */
export interface ConversationActivity {
  activeConversations(): number;
  coordinator(): { readonly conversations: number; readonly queued: number };
}

/** Task durations by task type (`ai.svc.parser`, ...) and outcome. */
export class TaskMeters {
  readonly duration: HotHistogram<'task_type' | 'outcome'>;
  readonly #byType = new Map<string, { ok: HistogramChild; error: HistogramChild }>();

  constructor(registers: Registry[]) {
    this.duration = new HotHistogram({
      name: 'svc_task_duration_seconds',
      help: 'Duration of lifecycle tasks by task type and outcome (ok, error)',
      labelNames: ['task_type', 'outcome'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
  }

  taskFinished(taskType: string, seconds: number, failed: boolean): void {
    let children = this.#byType.get(taskType);
    if (children === undefined) {
      children = { ok: this.duration.labels(taskType, 'ok'), error: this.duration.labels(taskType, 'error') };
      this.#byType.set(taskType, children);
    }
    (failed ? children.error : children.ok).observe(seconds);
  }
}

/** The outcome of an LLM call: answered, failed, or past its timeout. */
export type LlmCallOutcome = 'ok' | 'error' | 'timeout';

interface ModelChildren {
  readonly calls: Record<LlmCallOutcome, CounterChild>;
  readonly inputTokens: CounterChild;
  readonly outputTokens: CounterChild;
  readonly cost: CounterChild;
}

/** LLM calls, tokens and cost by provider and model; model cascade attempts. */
export class LlmMeters {
  readonly calls: HotCounter<'provider' | 'model' | 'outcome'>;
  readonly tokens: HotCounter<'provider' | 'model' | 'direction'>;
  readonly cost: HotCounter<'provider' | 'model'>;
  readonly cascadeAttempts: HotCounter<'model' | 'outcome'>;
  readonly #byModel = new Map<string, Map<string, ModelChildren>>();

  constructor(registers: Registry[]) {
    this.calls = new HotCounter({
      name: 'svc_llm_calls_total',
      help: 'LLM provider requests (each retry attempt, each step of a tool loop) by provider, model and outcome (ok, error, timeout)',
      labelNames: ['provider', 'model', 'outcome'] as const,
      registers,
    });
    this.tokens = new HotCounter({
      name: 'svc_llm_tokens_total',
      help: 'LLM tokens by provider, model and direction (input, output)',
      labelNames: ['provider', 'model', 'direction'] as const,
      registers,
    });
    this.cost = new HotCounter({
      name: 'svc_llm_cost_usd_total',
      help: 'Estimated LLM cost in US dollars by provider and model (from the price table)',
      labelNames: ['provider', 'model'] as const,
      registers,
    });
    this.cascadeAttempts = new HotCounter({
      name: 'svc_llm_cascade_attempts_total',
      help: 'Model cascade attempts by model and outcome (accepted, escalated, failed)',
      labelNames: ['model', 'outcome'] as const,
      registers,
    });
  }

  callFinished(provider: string, model: string, outcome: LlmCallOutcome, requests = 1): void {
    this.#children(provider, model).calls[outcome].inc(requests);
  }

  /** Tokens and the cost of one model call. */
  used(provider: string, model: string, inputTokens: number, outputTokens: number, costUsd: number): void {
    const children = this.#children(provider, model);
    if (inputTokens > 0) children.inputTokens.inc(inputTokens);
    if (outputTokens > 0) children.outputTokens.inc(outputTokens);
    if (costUsd > 0) children.cost.inc(costUsd);
  }

  #children(provider: string, model: string): ModelChildren {
    let models = this.#byModel.get(provider);
    if (models === undefined) {
      models = new Map();
      this.#byModel.set(provider, models);
    }
    let children = models.get(model);
    if (children === undefined) {
      children = {
        calls: {
          ok: this.calls.labels(provider, model, 'ok'),
          error: this.calls.labels(provider, model, 'error'),
          timeout: this.calls.labels(provider, model, 'timeout'),
        },
        inputTokens: this.tokens.labels(provider, model, 'input'),
        outputTokens: this.tokens.labels(provider, model, 'output'),
        cost: this.cost.labels(provider, model),
      };
      models.set(model, children);
    }
    return children;
  }
}

/** How an outbound HTTP call (an HTTP-call task's request) ended. */
export type HttpCallOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'error' | 'timeout';

/** HTTP calls of the HTTP-call task by outcome, with their durations. */
export class HttpCallMeters {
  readonly duration: HotHistogram<'outcome'>;
  readonly #children = new Map<string, HistogramChild>();

  constructor(registers: Registry[]) {
    this.duration = new HotHistogram({
      name: 'svc_httpcall_duration_seconds',
      help: 'Outbound HTTP calls of HTTP-call tasks by outcome (2xx, 3xx, 4xx, 5xx, error, timeout); the _count is the number of calls',
      labelNames: ['outcome'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
  }

  callFinished(outcome: HttpCallOutcome, seconds: number): void {
    let child = this.#children.get(outcome);
    if (child === undefined) {
      child = this.duration.labels(outcome);
      this.#children.set(outcome, child);
    }
    child.observe(seconds);
  }
}

/** The outcome label of an HTTP status code. */
export function httpStatusOutcome(status: number): HttpCallOutcome {
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}

/** Tool calls of LLM agents by tool and outcome, and tool cache hits. */
export class ToolMeters {
  readonly calls: HotCounter<'tool' | 'outcome'>;
  readonly cacheHits: HotCounter<'tool'>;

  constructor(registers: Registry[]) {
    this.calls = new HotCounter({
      name: 'svc_tool_calls_total',
      help: 'Tool calls of LLM agents by tool and outcome (ok, error, cached, rate_limited)',
      labelNames: ['tool', 'outcome'] as const,
      registers,
    });
    this.cacheHits = new HotCounter({
      name: 'svc_tool_cache_hits_total',
      help: 'Tool calls answered from the tool result cache, by tool',
      labelNames: ['tool'] as const,
      registers,
    });
  }

  callFinished(tool: string, outcome: 'ok' | 'error' | 'cached' | 'rate_limited'): void {
    this.calls.inc({ tool, outcome });
    if (outcome === 'cached') this.cacheHits.inc({ tool });
  }
}

/** Vault operations by operation (read, write, delete, list) and outcome. */
export class VaultMeters {
  readonly operations: HotCounter<'operation' | 'outcome'>;

  constructor(registers: Registry[]) {
    this.operations = new HotCounter({
      name: 'svc_vault_operations_total',
      help: 'Vault operations by operation (resolve, write, delete, list, describe) and outcome (ok, error, missing)',
      labelNames: ['operation', 'outcome'] as const,
      registers,
    });
  }

  operation(operation: string, outcome: 'ok' | 'error' | 'missing'): void {
    this.operations.inc({ operation, outcome });
  }
}

/** Deployed agents by environment and status, read from the deployment service when scraped. */
export function deployedAgentsGauge(
  registers: Registry[],
  list: () => ReadonlyArray<{ readonly environment: string; readonly status: string }>,
): Gauge<'environment' | 'status'> {
  return new Gauge({
    name: 'svc_deployed_agents',
    help: 'Deployed agent versions by environment and status (READY, IN_PROGRESS, ERROR)',
    labelNames: ['environment', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const { environment, status } of list()) this.inc({ environment, status });
    },
  });
}
