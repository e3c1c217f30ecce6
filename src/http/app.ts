import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { LogBuffer } from '../ops/log-buffer.ts';
import type { Metrics } from '../ops/metrics.ts';
import { ResourceService } from '../resources/service.ts';
import { compileBodyValidator, compileParameterValidator } from '../resources/validation.ts';
import type { Settings } from '../settings.ts';
import type { Storage } from '../storage/ports.ts';
import { rewriteLegacyPath } from './legacy-paths.ts';
import { httpMetricsHook, operationsRoutes } from './operations.ts';
import { registerProblemHandling } from './problems.ts';
import { storeRoutes } from './stores.ts';

export interface AppDependencies {
  readonly settings: Settings;
  readonly storage: Storage;
  readonly metrics: Metrics;
  readonly logBuffer: LogBuffer;
  readonly logger: FastifyServerOptions['logger'];
}

/** Per-request log lines at debug level (visible with `svc.log.level=debug`), so that info stays about events. */
class QuietRequestLogs extends LogController {
  override incomingRequest(request: Parameters<LogController['incomingRequest']>[0]): void {
    request.log.trace({ method: request.method, url: request.url }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: Parameters<LogController['requestCompleted']>[1], reply: Parameters<LogController['requestCompleted']>[2]): void {
    reply.log.debug({ method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime, err: error ?? undefined }, 'request completed');
  }
}

/** The HTTP application: one plugin per API family over the services. Listening is the caller's business. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { settings, storage, metrics, logBuffer } = deps;
  const app = Fastify({
    logger: deps.logger,
    logController: new QuietRequestLogs(),
    bodyLimit: settings['svc.http.body-limit-bytes'],
    rewriteUrl: (request) => rewriteLegacyPath(request.url ?? '/'),
    return503OnClosing: false,
  });

  registerProblemHandling(app);
  // Bodies are checked strictly (nothing coerced or dropped); query strings and path parameters are text and coerced.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? compileBodyValidator(schema) : compileParameterValidator(schema)));
  app.addHook('onResponse', httpMetricsHook(metrics));

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Conversational agent orchestration service',
        description: 'Versioned agent configuration, deployment, conversations and operations.',
        version: '0.1.0',
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/q/swagger-ui' });
  app.get('/q/openapi', { schema: { hide: true } }, async () => app.swagger());

  const resources = new ResourceService(storage.resources);
  await app.register(storeRoutes, { resources });
  await app.register(operationsRoutes, { storage, metrics, logBuffer });
  return app;
}
