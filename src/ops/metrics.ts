import { SpanStatusCode } from '@opentelemetry/api';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { HotCounter, HotHistogram, type HotCounterChild, type HotHistogramChild } from './hot-meters.ts';
import type { Storage, Stores } from '../storage/ports.ts';
import {
  ConversationMeters,
  HttpCallMeters,
  LlmMeters,
  TaskMeters,
  ToolMeters,
  VaultMeters,
} from './domain-metrics.ts';
import { MetricSeries } from './metric-series.ts';
import type { Tracing } from './tracing.ts';

/**
 * The service's meters. Each `Metrics` owns its own prom-client `Registry` (never the global one), so several
 * servers can live in one process (tests). Naming: underscores, `svc_` prefix, counters end in `_total`,
 * durations in seconds.
 *
 * Features add their own meters through `metrics.registry`, e.g.
 * `new Counter({ name: 'svc_audit_entries_dropped_total', help: '...', registers: [metrics.registry] })`; meters
 * updated on the turn path use the hot meters of `hot-meters.ts` (same registry, same exposition).
 */
export interface Metrics {
  readonly registry: Registry;
  /** `svc_http_server_requests_seconds{method, route, status}`; route is the route pattern or `unmatched`. */
  readonly httpRequestDuration: HotHistogram<'method' | 'route' | 'status'>;
  /**
   * `svc_store_operations_total{kind, operation, outcome}`; kind is the resource kind or a runtime store name
   * (`conversations`, ...); outcome is `ok` or `error`.
   */
  readonly storeOperations: HotCounter<'kind' | 'operation' | 'outcome'>;
  /** `svc_store_operation_duration_seconds{kind, operation}`: store latency, same labels as the counter. */
  readonly storeDuration: HotHistogram<'kind' | 'operation'>;
  readonly conversations: ConversationMeters;
  readonly tasks: TaskMeters;
  readonly llm: LlmMeters;
  readonly httpCalls: HttpCallMeters;
  readonly tools: ToolMeters;
  readonly vault: VaultMeters;
  /** Recent turns, errors, durations and LLM cost for the manager's charts (`start()` it; `close()` stops it). */
  readonly series: MetricSeries;
  /**
   * Records one finished HTTP request. `route` must be the route pattern (`/agents/:agentId`), never the raw
   * URL; pass `undefined` (or `unmatched`) for a request no route matched.
   */
  observeHttpRequest(method: string, route: string | undefined, status: number | string, seconds: number): void;
  /** The Prometheus exposition of every meter in the registry. */
  exposition(): Promise<{ readonly contentType: string; readonly body: string }>;
}

export const UNMATCHED_ROUTE = 'unmatched';

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });

  const httpRequestDuration = new HotHistogram({
    name: 'svc_http_server_requests_seconds',
    help: 'HTTP server requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });

  const storeOperations = new HotCounter({
    name: 'svc_store_operations_total',
    help: 'Store operations by resource kind (or runtime store name), operation and outcome',
    labelNames: ['kind', 'operation', 'outcome'] as const,
    registers: [registry],
  });

  const storeDuration = new HotHistogram({
    name: 'svc_store_operation_duration_seconds',
    help: 'Store operation latency by resource kind (or runtime store name) and operation',
    labelNames: ['kind', 'operation'] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });

  const registers = [registry];
  const conversations = new ConversationMeters(registers);
  const llm = new LlmMeters(registers);
  return {
    registry,
    httpRequestDuration,
    storeOperations,
    storeDuration,
    conversations,
    tasks: new TaskMeters(registers),
    llm,
    httpCalls: new HttpCallMeters(registers),
    tools: new ToolMeters(registers),
    vault: new VaultMeters(registers),
    series: new MetricSeries({
      turns: conversations.turns,
      turnDuration: conversations.turnDuration,
      llmCost: llm.cost,
    }),
    observeHttpRequest(method, route, status, seconds) {
      httpRequestDuration.observe(
        { method, route: route === undefined || route === '' ? UNMATCHED_ROUTE : route, status: String(status) },
        seconds,
      );
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** `ConfigResourceStore` methods whose first argument is the resource kind. */
const KIND_FIRST = new Set<PropertyKey>([
  'update',
  'read',
  'descriptor',
  'softDelete',
  'purge',
  'listDescriptors',
  'editDescriptor',
]);

function kindOf(operation: PropertyKey, args: readonly unknown[]): string {
  const first = args[0];
  if (KIND_FIRST.has(operation) && typeof first === 'string') return first;
  if (operation === 'create' && typeof first === 'object' && first !== null) {
    const kind = (first as { kind?: unknown }).kind;
    if (typeof kind === 'string') return kind;
  }
  return 'any';
}

/** The runtime stores on `Storage`; their calls are counted with `kind` = the store name. */
const RUNTIME_STORES = new Set<PropertyKey>([
  'conversations',
  'userProperties',
  'userMemories',
  'deployments',
  'triggers',
]);

/**
 * Wraps a storage so that every `storage.resources` call is counted in `svc_store_operations_total`
 * (operation = method name, outcome `ok` or `error`, kind = the resource kind when the call names one, else
 * `any`), and every call of a runtime store (`conversations`, `userProperties`, `userMemories`, `deployments`, `triggers`)
 * with kind = the store's name; the stores a transaction's work gets are counted the same way. Everything else is
 * delegated unchanged; methods run with the original object as `this`.
 */
export function instrumentStorage(storage: Storage, metrics: Metrics, tracing?: Tracing): Storage {
  return instrumentStores(storage, { count: metrics.storeOperations, duration: metrics.storeDuration, tracing });
}

interface StoreMeters {
  readonly count: HotCounter<'kind' | 'operation' | 'outcome'>;
  readonly duration: HotHistogram<'kind' | 'operation'>;
  /** A span per store operation when traces are on. */
  readonly tracing: Tracing | undefined;
}

function instrumentStores<T extends Stores>(stores: T, meters: StoreMeters): T {
  const instrumentedResources = instrumentStore(stores.resources, meters, kindOf);
  const instrumentedStores = new Map<PropertyKey, object>();

  const boundMethods = new Map<PropertyKey, unknown>();
  return new Proxy(stores, {
    get(target, property) {
      if (property === 'resources') return instrumentedResources;
      const value: unknown = Reflect.get(target, property, target);
      if (property === 'transaction' && typeof value === 'function') {
        return (work: (tx: Stores) => Promise<unknown>) =>
          (value as Storage['transaction']).call(target, (tx) => work(instrumentStores(tx, meters)));
      }
      if (RUNTIME_STORES.has(property) && typeof value === 'object' && value !== null) {
        let instrumented = instrumentedStores.get(property);
        if (instrumented === undefined) {
          const kind = String(property);
          instrumented = instrumentStore(value, meters, () => kind);
          instrumentedStores.set(property, instrumented);
        }
        return instrumented;
      }
      if (typeof value !== 'function') return value;
      let bound = boundMethods.get(property);
      if (bound === undefined) {
        bound = (value as (...args: unknown[]) => unknown).bind(target);
        boundMethods.set(property, bound);
      }
      return bound;
    },
  });
}

/** The label children of one operation on one kind, bound once. */
interface OperationChildren {
  readonly ok: HotCounterChild;
  readonly error: HotCounterChild;
  readonly duration: HotHistogramChild;
}

/**
 * A proxy of `store` counting each method call by the kind `kindFor` names, operation and outcome, and timing it.
 */
function instrumentStore<T extends object>(
  store: T,
  meters: StoreMeters,
  kindFor: (operation: PropertyKey, args: readonly unknown[]) => string,
): T {
  const wrappers = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let wrapper = wrappers.get(property);
      if (wrapper === undefined) {
        const operation = typeof property === 'string' ? property : String(property);
        const method = value as (...args: unknown[]) => unknown;
        const byKind = new Map<string, OperationChildren>();
        const childrenOf = (kind: string): OperationChildren => {
          let children = byKind.get(kind);
          if (children === undefined) {
            children = {
              ok: meters.count.labels(kind, operation, 'ok'),
              error: meters.count.labels(kind, operation, 'error'),
              duration: meters.duration.labels(kind, operation),
            };
            byKind.set(kind, children);
          }
          return children;
        };
        const tracing = meters.tracing;
        wrapper = function instrumented(...args: unknown[]): unknown {
          const kind = kindFor(property, args);
          const children = childrenOf(kind);
          const startedAt = performance.now();
          const span = tracing?.startSpan(`store ${kind}.${operation}`, {
            'db.operation.name': operation,
            'svc.store.kind': kind,
          });
          const finished = (failed: boolean) => {
            children.duration.observe((performance.now() - startedAt) / 1000);
            (failed ? children.error : children.ok).inc();
            if (span !== undefined) {
              if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
              span.end();
            }
          };
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (error) {
            finished(true);
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (resolved: unknown) => {
                finished(false);
                return resolved;
              },
              (error: unknown) => {
                finished(true);
                throw error;
              },
            );
          }
          finished(false);
          return result;
        };
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}
