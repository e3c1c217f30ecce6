import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';

/**
 * OpenTelemetry traces, off unless an OTLP endpoint is set (`svc.tracing.otlp-endpoint`, else the standard
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`). Spans: each incoming request (its parent
 * taken from an incoming `traceparent`), each turn, each task of the turn, each outbound HTTP request (HTTP calls,
 * LLM providers, MCP servers, A2A peers: everything sent through the outbound dispatcher, which also carries the W3C
 * `traceparent` to the target) and each store operation. Exported over OTLP/HTTP (JSON) in batches.
 *
 * When tracing is off no `Tracing` exists (this module and the SDK are not even loaded): the features' `tracing?.…`
 * branches are skipped, no hook or interceptor is installed, and the turn path does no tracing work at all.
 *
 * Span attributes carry ids an operator needs to find a conversation (agent id, conversation id as an attribute,
 * never a label of a metric), never message texts, headers or secrets.
 */

const propagator = new W3CTraceContextPropagator();

let contextManagerInstalled = false;

/** AsyncLocalStorage carries the active span through awaits; installed once per process (the API's global). */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  contextManagerInstalled = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

export class Tracing {
  readonly tracer: Tracer;
  readonly #provider: TracerProvider;

  constructor(options: { url: string; serviceName: string; scheduledDelayMillis?: number }) {
    installContextManager();
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: options.url }),
          scheduledDelayMillis: options.scheduledDelayMillis ?? 5000,
        }),
      ],
    });
    this.tracer = this.#provider.getTracer('svc-agents');
  }

  /**
   * Runs `work` in a new span, active for everything `work` awaits (child spans, outbound calls); the span ends when
   * `work` settles and records a thrown error.
   */
  inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
    return this.tracer.startActiveSpan(name, { attributes }, async (span) => {
      try {
        return await work(span);
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
  }

  /** Starts a span under the active one without making it active (leaf work such as a store query). */
  startSpan(name: string, attributes: Attributes): Span {
    return this.tracer.startSpan(name, { attributes });
  }

  /**
   * Fastify hooks: a SERVER span per request named `METHOD /route/pattern`, child of the caller's `traceparent`
   * when it sends one, active while the handler runs.
   */
  instrument(app: FastifyInstance): void {
    const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
    app.addHook('onRequest', (request, _reply, done) => {
      const parent = propagator.extract(context.active(), request.headers, defaultTextMapGetter);
      const route = request.routeOptions.url ?? 'unmatched';
      const span = this.tracer.startSpan(
        `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } },
        parent,
      );
      spans.set(request, { span, context: trace.setSpan(parent, span) });
      done();
    });
    app.addHook('preHandler', (request, _reply, done) => {
      const started = spans.get(request);
      if (started === undefined) done();
      else context.with(started.context, done);
    });
    const end = (request: FastifyRequest, statusCode: number | undefined) => {
      const started = spans.get(request);
      if (started === undefined) return;
      spans.delete(request);
      if (statusCode === undefined) started.span.setStatus({ code: SpanStatusCode.ERROR, message: 'client aborted' });
      else {
        started.span.setAttribute('http.response.status_code', statusCode);
        if (statusCode >= 500) started.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      started.span.end();
    };
    app.addHook('onResponse', (request, reply, done) => {
      end(request, reply.statusCode);
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      end(request, undefined);
      done();
    });
  }

  /**
   * An undici interceptor: a CLIENT span per outbound request, child of the active span, and the W3C `traceparent`
   * (and `tracestate`) of that span added to the request's headers.
   */
  interceptor(): Dispatcher.DispatcherComposeInterceptor {
    return (dispatch) => (options, handler) => {
      const method = options.method ?? 'GET';
      const origin = options.origin === undefined ? '' : String(options.origin);
      const span = this.tracer.startSpan(`HTTP ${method}`, {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': method, 'server.address': hostOf(origin) },
      });
      const carrier: Record<string, string> = {};
      propagator.inject(trace.setSpan(context.active(), span), carrier, defaultTextMapSetter);
      let ended = false;
      const finish = (statusCode: number | undefined, error?: Error) => {
        if (ended) return;
        ended = true;
        if (statusCode !== undefined) span.setAttribute('http.response.status_code', statusCode);
        if (error !== undefined) failed(span, error);
        else if (statusCode !== undefined && statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      let status: number | undefined;
      return dispatch(
        { ...options, headers: withHeaders(options.headers, carrier) },
        {
          onRequestStart: (controller, requestContext) => handler.onRequestStart?.(controller, requestContext),
          onRequestUpgrade: (controller, statusCode, headers, socket) => {
            finish(statusCode);
            handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
          },
          onResponseStart: (controller, statusCode, headers, statusMessage) => {
            if (statusCode >= 200) status = statusCode;
            handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
          },
          onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
          onResponseEnd: (controller, trailers) => {
            finish(status);
            handler.onResponseEnd?.(controller, trailers);
          },
          onResponseError: (controller, error) => {
            finish(status, error);
            handler.onResponseError?.(controller, error);
          },
        },
      );
    };
  }

  /** Sends the spans not exported yet and stops. */
  async shutdown(): Promise<void> {
    await this.#provider.shutdown().catch(() => undefined);
  }
}

function failed(span: Span, error: unknown): void {
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.name : 'error',
  });
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}

/** The request's headers (any of undici's forms) with `extra` added. */
function withHeaders(
  headers: Dispatcher.DispatchOptions['headers'],
  extra: Record<string, string>,
): Dispatcher.DispatchOptions['headers'] {
  if (headers === undefined || headers === null) return extra;
  if (Array.isArray(headers)) {
    const flat: string[] = [...(headers as string[])];
    for (const [name, value] of Object.entries(extra)) flat.push(name, value);
    return flat;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    return [...(headers as Iterable<[string, string | string[] | undefined]>), ...Object.entries(extra)];
  }
  return { ...(headers as Record<string, string | string[] | undefined>), ...extra };
}
