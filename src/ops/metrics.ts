import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Storage, Stores } from '../storage/ports.ts';

/**
 * The service's meters. Each `Metrics` owns its own prom-client `Registry` (never the global one), so several
 * servers can live in one process (tests). Naming: underscores, `svc_` prefix, counters end in `_total`,
 * durations in seconds.
 *
 * Features add their own meters through `metrics.registry`, e.g.
 * `new Counter({ name: 'svc_audit_entries_dropped_total', help: '...', registers: [metrics.registry] })`.
 */
export interface Metrics {
  readonly registry: Registry;
  /** `svc_http_server_requests_seconds{method, route, status}`; route is the route pattern or `unmatched`. */
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  /**
   * `svc_store_operations_total{kind, operation, outcome}`; kind is the resource kind or a runtime store name
   * (`conversations`, ...); outcome is `ok` or `error`.
   */
  readonly storeOperations: Counter<'kind' | 'operation' | 'outcome'>;
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

  const httpRequestDuration = new Histogram({
    name: 'svc_http_server_requests_seconds',
    help: 'HTTP server requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });

  const storeOperations = new Counter({
    name: 'svc_store_operations_total',
    help: 'Store operations by resource kind (or runtime store name), operation and outcome',
    labelNames: ['kind', 'operation', 'outcome'] as const,
    registers: [registry],
  });

  return {
    registry,
    httpRequestDuration,
    storeOperations,
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
export function instrumentStorage(storage: Storage, metrics: Metrics): Storage {
  return instrumentStores(storage, metrics.storeOperations);
}

function instrumentStores<T extends Stores>(stores: T, counter: Counter<'kind' | 'operation' | 'outcome'>): T {
  const instrumentedResources = instrumentStore(stores.resources, counter, kindOf);
  const instrumentedStores = new Map<PropertyKey, object>();

  const boundMethods = new Map<PropertyKey, unknown>();
  return new Proxy(stores, {
    get(target, property) {
      if (property === 'resources') return instrumentedResources;
      const value: unknown = Reflect.get(target, property, target);
      if (property === 'transaction' && typeof value === 'function') {
        return (work: (tx: Stores) => Promise<unknown>) =>
          (value as Storage['transaction']).call(target, (tx) => work(instrumentStores(tx, counter)));
      }
      if (RUNTIME_STORES.has(property) && typeof value === 'object' && value !== null) {
        let instrumented = instrumentedStores.get(property);
        if (instrumented === undefined) {
          const kind = String(property);
          instrumented = instrumentStore(value, counter, () => kind);
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

/** A proxy of `store` counting each method call by the kind `kindFor` names, operation and outcome. */
function instrumentStore<T extends object>(
  store: T,
  counter: Counter<'kind' | 'operation' | 'outcome'>,
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
        wrapper = function instrumented(...args: unknown[]): unknown {
          const labels = (outcome: 'ok' | 'error') => ({ kind: kindFor(property, args), operation, outcome });
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (error) {
            counter.inc(labels('error'));
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (resolved: unknown) => {
                counter.inc(labels('ok'));
                return resolved;
              },
              (error: unknown) => {
                counter.inc(labels('error'));
                throw error;
              },
            );
          }
          counter.inc(labels('ok'));
          return result;
        };
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}
