import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../errors.ts';
import { parseLogLevel, type LogBuffer, type LogEntry, type LogFilter, type LogLevel, LOG_LEVELS } from '../ops/log-buffer.ts';
import { UNMATCHED_ROUTE, type Metrics } from '../ops/metrics.ts';
import type { Storage } from '../storage/ports.ts';

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
  /** Interval of SSE comment heartbeats; default 15000 ms. */
  readonly heartbeatMs?: number;
}

/** Entries sent when a log stream opens, before live ones. */
export const STREAM_BACKLOG = 50;
/** A stream whose client does not read is not fed beyond this many buffered bytes (entries are dropped). */
const STREAM_MAX_BUFFERED_BYTES = 1024 * 1024;

const healthCheck = {
  type: 'object',
  required: ['name', 'status'],
  properties: {
    name: { type: 'string' },
    status: { type: 'string', enum: ['UP', 'DOWN'] },
    reason: { type: 'string' },
  },
} as const;

const health = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['UP', 'DOWN'] },
    checks: { type: 'array', items: healthCheck },
  },
} as const;

const logEntry = {
  type: 'object',
  description: 'one log entry; fields without a value are omitted, other fields of the log line follow as given',
  required: ['timestamp', 'level', 'message'],
  properties: {
    timestamp: { type: 'integer', description: 'epoch milliseconds' },
    level: { type: 'string', enum: [...LOG_LEVELS] },
    loggerName: { type: 'string' },
    message: { type: 'string' },
    environment: { type: 'string' },
    agentId: { type: 'string' },
    agentVersion: { type: 'integer' },
    conversationId: { type: 'string' },
    userId: { type: 'string' },
    instanceId: { type: 'string' },
  },
  additionalProperties: true,
} as const;

const problem = {
  type: 'object',
  description: 'problem details',
  additionalProperties: true,
} as const;

const levelQuery = {
  type: 'string',
  description: `this level and above: ${LOG_LEVELS.join(', ')} (case-insensitive); default INFO`,
} as const;
const searchQuery = { type: 'string', maxLength: 1000, description: 'case-insensitive text the message contains' } as const;
const agentIdQuery = { type: 'string', maxLength: 200, description: 'only entries of this agent' } as const;
const conversationIdQuery = { type: 'string', maxLength: 200, description: 'only entries of this conversation' } as const;

interface LogsQuery {
  level?: string;
  search?: string;
  limit?: string;
  agentId?: string;
  conversationId?: string;
}

function levelOf(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'INFO';
  const level = parseLogLevel(value);
  if (level === undefined) {
    throw invalid(`unknown log level; expected one of ${LOG_LEVELS.join(', ')}`, { parameter: 'level' });
  }
  return level;
}

function filterOf(query: LogsQuery): LogFilter {
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

export async function operationsRoutes(app: FastifyInstance, deps: OperationsDeps): Promise<void> {
  const { storage, metrics, logBuffer } = deps;
  const readinessTimeoutMs = deps.readinessTimeoutMs ?? 3000;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;

  app.get('/q/health/live', {
    schema: {
      tags: ['operations'],
      summary: 'Liveness: the process answers',
      response: { 200: health },
    },
  }, async () => ({ status: 'UP', checks: [] }));

  app.get('/q/health/ready', {
    schema: {
      tags: ['operations'],
      summary: 'Readiness: the store answers',
      response: { 200: health, 503: health },
    },
  }, async (request, reply) => {
    try {
      await withTimeout(storage.ping(), readinessTimeoutMs);
      return { status: 'UP', checks: [{ name: 'store', status: 'UP' }] };
    } catch (error) {
      // the error's text may quote a connection string (with its password): neither log nor answer it
      const code = (error as { code?: unknown }).code;
      request.log.warn(
        { errorType: error instanceof Error ? error.name : typeof error, ...(typeof code === 'string' ? { code } : {}) },
        'readiness check: the store does not answer',
      );
      reply.code(503);
      return { status: 'DOWN', checks: [{ name: 'store', status: 'DOWN', reason: 'the store does not answer' }] };
    }
  });

  app.get('/q/metrics', {
    schema: {
      tags: ['operations'],
      summary: 'Prometheus metrics',
      produces: ['text/plain'],
      response: { 200: { type: 'string', description: 'Prometheus text exposition format' } },
    },
  }, async (_request, reply) => {
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });

  app.get<{ Querystring: LogsQuery }>('/administration/logs', {
    schema: {
      tags: ['operations'],
      summary: 'Recent server log entries (newest last)',
      querystring: {
        type: 'object',
        properties: {
          level: levelQuery,
          search: searchQuery,
          limit: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'most entries returned; default 100' },
          agentId: agentIdQuery,
          conversationId: conversationIdQuery,
        },
        additionalProperties: false,
      },
      response: { 200: { type: 'array', items: logEntry }, 400: problem },
    },
  }, async (request) => {
    const query = request.query;
    const limit = query.limit === undefined || query.limit === '' ? undefined : Number(query.limit);
    return logBuffer.recent({ ...filterOf(query), limit });
  });

  const openStreams = new Set<() => void>();
  const endAllStreams = async (): Promise<void> => {
    for (const end of [...openStreams]) end();
  };
  // preClose runs before the server stops accepting and waits for open connections; onClose as a fallback
  app.addHook('preClose', endAllStreams);
  app.addHook('onClose', endAllStreams);

  app.get<{ Querystring: Omit<LogsQuery, 'limit'> }>('/administration/logs/stream', {
    schema: {
      tags: ['operations'],
      summary: 'Server log entries as server-sent events',
      description: `First up to ${STREAM_BACKLOG} recent matching entries, then live ones; each event's data is one entry as JSON. A comment line is sent as a heartbeat.`,
      produces: ['text/event-stream'],
      querystring: {
        type: 'object',
        properties: {
          level: levelQuery,
          search: searchQuery,
          agentId: agentIdQuery,
          conversationId: conversationIdQuery,
        },
        additionalProperties: false,
      },
      response: {
        200: { type: 'string', description: 'text/event-stream: `data: <entry JSON>` events' },
        400: problem,
      },
    },
  }, async (request: FastifyRequest<{ Querystring: Omit<LogsQuery, 'limit'> }>, reply: FastifyReply) => {
    const filter = filterOf(request.query); // throws 400 before anything is written
    const res = reply.raw;
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) headers[name] = value;
    }
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });

    const send = (entry: LogEntry): void => {
      if (res.writableEnded || res.destroyed || res.writableLength > STREAM_MAX_BUFFERED_BYTES) return;
      res.write(`data: ${JSON.stringify(entry)}\n\n`);
    };

    let unsubscribe: (() => void) | undefined;
    const heartbeat = setInterval(() => {
      if (!res.writableEnded && !res.destroyed) res.write(': heartbeat\n\n');
    }, heartbeatMs);
    heartbeat.unref();

    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe?.();
      openStreams.delete(end);
      if (!res.writableEnded && !res.destroyed) res.end();
    };
    openStreams.add(end);
    res.on('close', end);
    res.on('error', end);

    res.write(': log stream\n\n');
    for (const entry of logBuffer.recent({ ...filter, limit: STREAM_BACKLOG })) send(entry);
    unsubscribe = logBuffer.subscribe(send, filter);
    if (ended) unsubscribe(); // the client was already gone
  });
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
