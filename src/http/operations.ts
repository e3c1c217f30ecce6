import { addAbortListener } from 'node:events';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../errors.ts';
import {
  parseLogLevel,
  type LogBuffer,
  type LogEntry,
  type LogFilter,
  type LogLevel,
  LOG_LEVELS,
} from '../ops/log-buffer.ts';
import { UNMATCHED_ROUTE, type Metrics } from '../ops/metrics.ts';
import { SERIES_WINDOWS } from '../ops/metric-series.ts';
import type { Storage } from '../storage/ports.ts';
import { DEFAULT_HEARTBEAT_MS, type EventStream, openEventStream } from './event-stream.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The operational surface: health checks, Prometheus metrics, log administration (JSON and SSE).
 * Register with `app.register(operationsRoutes, deps)`; it is an ordinary encapsulated plugin.
 */
export interface OperationsDeps {
  readonly storage: Storage;
  readonly metrics: Metrics;
  readonly logBuffer: LogBuffer;
  /** Readiness answers DOWN when the store has not answered within this time; default 3000 ms. */
  readonly readinessTimeoutMs?: number;
  /** Interval of SSE comment heartbeats; default 15 s. */
  readonly heartbeatMs?: number;
  /** True once the service drains before a shutdown: readiness then answers DOWN. */
  readonly draining?: (() => boolean) | undefined;
}

/** Entries sent when a log stream opens, before live ones. */
export const STREAM_BACKLOG = 50;
/** A stream whose client does not read is not fed beyond this many queued bytes (entries are dropped). */
const STREAM_MAX_QUEUED_BYTES = 1024 * 1024;

const HealthCheck = Type.Object({
  name: Type.String(),
  status: Type.Union([Type.Literal('UP'), Type.Literal('DOWN')]),
  reason: Type.Optional(Type.String()),
});

const Health = Type.Object({
  status: Type.Union([Type.Literal('UP'), Type.Literal('DOWN')]),
  checks: Type.Array(HealthCheck),
});

const LogEntrySchema = Type.Object(
  {
    timestamp: Type.Integer({ description: 'epoch milliseconds' }),
    level: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level))),
    loggerName: Type.Optional(Type.String()),
    message: Type.String(),
    environment: Type.Optional(Type.String()),
    agentId: Type.Optional(Type.String()),
    agentVersion: Type.Optional(Type.Integer()),
    conversationId: Type.Optional(Type.String()),
    userId: Type.Optional(Type.String()),
    instanceId: Type.Optional(Type.String()),
  },
  {
    additionalProperties: true,
    description: 'one log entry; fields without a value are omitted, other fields of the log line follow as given',
  },
);

const Problem = Type.Object({}, { additionalProperties: true, description: 'problem details' });

const SeriesQuery = Type.Object(
  {
    window: Type.Union(
      SERIES_WINDOWS.map((window) => Type.Literal(window)),
      { description: 'hour: the last hour at 10 s steps; day: the last day at 1 min steps' },
    ),
  },
  { additionalProperties: false },
);

const Milliseconds = Type.Union([Type.Number(), Type.Null()], {
  description: 'turn duration percentile in milliseconds; null when the step had no turn',
});

const SeriesSchema = Type.Object({
  window: Type.Union(SERIES_WINDOWS.map((window) => Type.Literal(window))),
  stepSeconds: Type.Integer(),
  points: Type.Array(
    Type.Object({
      t: Type.Integer({ description: 'start of the step, epoch milliseconds' }),
      turns: Type.Integer(),
      errors: Type.Integer({ description: 'turns that ended in ERROR or ran past the turn timeout' }),
      p50Ms: Milliseconds,
      p95Ms: Milliseconds,
      p99Ms: Milliseconds,
      llmCostUsd: Type.Number({ description: 'estimated LLM cost in US dollars during the step' }),
    }),
    { description: 'oldest first; the last point is the step in progress' },
  ),
  byAgent: Type.Array(Type.Object({ agentId: Type.String(), turns: Type.Integer(), errors: Type.Integer() }), {
    description: 'totals over the window, most turns first',
  }),
});

const LogStreamQuery = Type.Object(
  {
    level: Type.Optional(
      Type.String({ description: `this level and above: ${LOG_LEVELS.join(', ')} (case-insensitive); default INFO` }),
    ),
    search: Type.Optional(Type.String({ maxLength: 1000, description: 'case-insensitive text the message contains' })),
    agentId: Type.Optional(Type.String({ maxLength: 200, description: 'only entries of this agent' })),
    conversationId: Type.Optional(Type.String({ maxLength: 200, description: 'only entries of this conversation' })),
  },
  { additionalProperties: false },
);

const LogsQuery = Type.Composite(
  [
    LogStreamQuery,
    Type.Object({
      limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'most entries returned; default 100' })),
    }),
  ],
  { additionalProperties: false },
);

function levelOf(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'INFO';
  const level = parseLogLevel(value);
  if (level === undefined) {
    throw invalid(`unknown log level; expected one of ${LOG_LEVELS.join(', ')}`, { parameter: 'level' });
  }
  return level;
}

function filterOf(query: Static<typeof LogStreamQuery>): LogFilter {
  return {
    level: levelOf(query.level),
    search: query.search,
    agentId: query.agentId,
    conversationId: query.conversationId,
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function operationsRoutes(app: TypedApp, deps: OperationsDeps): Promise<void> {
  const { storage, metrics, logBuffer } = deps;
  const readinessTimeoutMs = deps.readinessTimeoutMs ?? 3000;
  const heartbeatMs = deps.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;

  app.get(
    '/q/health/live',
    {
      config: { access: { roles: 'public' } },
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        response: { 200: Health },
      },
    },
    async (): Promise<Static<typeof Health>> => ({ status: 'UP', checks: [] }),
  );

  app.get(
    '/q/health/ready',
    {
      config: { access: { roles: 'public' } },
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the store answers and the service is not shutting down',
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply): Promise<Static<typeof Health>> => {
      if (deps.draining?.()) {
        reply.code(503);
        return { status: 'DOWN', checks: [{ name: 'drain', status: 'DOWN', reason: 'the service is shutting down' }] };
      }
      try {
        await withTimeout(storage.ping(), readinessTimeoutMs);
        return { status: 'UP', checks: [{ name: 'store', status: 'UP' }] };
      } catch (error) {
        // the error's text may quote a connection string (with its password): neither log nor answer it
        const code = (error as { code?: unknown }).code;
        request.log.warn(
          {
            errorType: error instanceof Error ? error.name : typeof error,
            ...(typeof code === 'string' ? { code } : {}),
          },
          'readiness check: the store does not answer',
        );
        reply.code(503);
        return { status: 'DOWN', checks: [{ name: 'store', status: 'DOWN', reason: 'the store does not answer' }] };
      }
    },
  );

  app.get(
    '/q/metrics',
    {
      config: { access: { roles: 'read' } },
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics',
        produces: ['text/plain'],
        response: { 200: { type: 'string', description: 'Prometheus text exposition format' } },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await metrics.exposition();
      return reply.type(contentType).send(body);
    },
  );

  app.get(
    '/q/metrics/series',
    {
      config: { access: { roles: 'read' } },
      schema: {
        tags: ['operations'],
        summary:
          "Recent turns, errors, turn duration percentiles and LLM cost of this instance, for the manager's charts",
        querystring: SeriesQuery,
        response: { 200: SeriesSchema, 400: Problem },
      },
    },
    async (request) => metrics.series.series(request.query.window),
  );

  app.get(
    '/administration/logs',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags: ['operations'],
        summary: 'Recent server log entries (newest last)',
        querystring: LogsQuery,
        response: { 200: Type.Array(LogEntrySchema), 400: Problem },
      },
    },
    async (request) => {
      const query = request.query;
      const limit = query.limit === undefined || query.limit === '' ? undefined : Number(query.limit);
      return logBuffer.recent({ ...filterOf(query), limit });
    },
  );

  const openStreams = new Set<EventStream>();
  const endAllStreams = async (): Promise<void> => {
    for (const stream of [...openStreams]) stream.close();
  };
  // preClose runs before the server stops accepting and waits for open connections; onClose as a fallback
  app.addHook('preClose', endAllStreams);
  app.addHook('onClose', endAllStreams);

  app.get(
    '/administration/logs/stream',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags: ['operations'],
        summary: 'Server log entries as server-sent events',
        description: `First up to ${STREAM_BACKLOG} recent matching entries, then live ones; each event's data is one entry as JSON. A comment line is sent as a heartbeat.`,
        produces: ['text/event-stream'],
        querystring: LogStreamQuery,
        response: {
          200: Type.String({ description: 'text/event-stream: `data: <entry JSON>` events' }),
          400: Problem,
        },
      },
    },
    async (request, reply) => {
      const filter = filterOf(request.query); // throws 400 before anything is written
      const stream = openEventStream(reply, { heartbeatMs, maxQueuedBytes: STREAM_MAX_QUEUED_BYTES });
      openStreams.add(stream);
      const send = (entry: LogEntry): void => void stream.send(entry);
      for (const entry of logBuffer.recent({ ...filter, limit: STREAM_BACKLOG })) send(entry);
      const unsubscribe = logBuffer.subscribe(send, filter);
      addAbortListener(stream.signal, () => {
        unsubscribe();
        openStreams.delete(stream);
      });
    },
  );
}

/**
 * An `onResponse` hook recording every request in `svc_http_server_requests_seconds`. Add it on the root
 * instance: `app.addHook('onResponse', httpMetricsHook(metrics))`. The route label is the route pattern
 * (`request.routeOptions.url`), or `unmatched` when no route matched.
 */
export function httpMetricsHook(metrics: Metrics) {
  return async function recordHttpRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    metrics.observeHttpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  };
}
