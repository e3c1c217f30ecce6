import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorKind } from '../errors.ts';
import { describeSchemaError } from '../resources/validation.ts';
import { storeFailure } from '../storage/failures.ts';

/**
 * One error shape everywhere: RFC 9457 problem details (`application/problem+json`) with `type`, `title`,
 * `status`, `detail`, plus members that help the caller (the JSON path of an unknown field, ...).
 */
const statusOfKind: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  gone: 410,
  unprocessable: 422,
  timeout: 408,
  unavailable: 503,
  'insufficient-storage': 507,
};

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [member: string]: unknown;
}

export function problem(status: number, detail: string, extra: Record<string, unknown> = {}): Problem {
  const title = titles[status] ?? 'Error';
  return { type: `urn:svc:problem:${title.toLowerCase().replace(/ /g, '-')}`, title, status, detail, ...extra };
}

export function sendProblem(reply: FastifyReply, value: Problem, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(value.status).headers(headers).type('application/problem+json').send(value);
}

/** Fastify's own client errors, with a detail a user can act on. */
function frameworkProblem(error: FastifyError): Problem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem(415, `Unsupported content type. ${error.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem(413, 'The request body is larger than the service accepts (svc.http.body-limit-bytes).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem(400, 'The request body is empty but its content type is JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problem(400, `The request body is not valid JSON (comments are not allowed): ${error.message}`);
    default:
      break;
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return problem(400, `The request body is not valid JSON (comments are not allowed): ${error.message}`);
  }
  if (error.validation && error.validation.length > 0) {
    const first = error.validation[0]!;
    const where = error.validationContext ?? 'request';
    const described = describeSchemaError(first as never, where === 'querystring' ? 'query string' : where);
    return problem(400, described.message, { ...described.details });
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return problem(error.statusCode, error.message);
  }
  return undefined;
}

/** The problem of a domain error (for streams, where no error handler runs); unexpected errors say nothing more. */
export function problemOf(error: unknown): Problem {
  error = storeFailure(error) ?? error;
  if (error instanceof AppError) {
    const { retryAfterSeconds: _, ...details } = error.details;
    return problem(statusOfKind[error.kind], error.message, details);
  }
  return problem(500, 'Internal error; the details are in the service log.');
}

function retryAfterHeader(error: AppError): Record<string, string> {
  return typeof error.details.retryAfterSeconds === 'number'
    ? { 'Retry-After': String(error.details.retryAfterSeconds) }
    : {};
}

export function registerProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const storeProblem = storeFailure(error);
    if (storeProblem) {
      // the cause's own text may quote a connection string: log only its kind and code
      const { code } = error as { code?: unknown };
      request.log.warn({ route: request.routeOptions.url, code, status: storeProblem.kind }, storeProblem.message);
      return sendProblem(reply, problemOf(storeProblem), retryAfterHeader(storeProblem));
    }
    if (error instanceof AppError) {
      return sendProblem(reply, problemOf(error), retryAfterHeader(error));
    }
    const clientProblem = frameworkProblem(error);
    if (clientProblem) return sendProblem(reply, clientProblem);
    request.log.error({ err: error, route: request.routeOptions.url }, 'unexpected failure');
    return sendProblem(
      reply,
      problem(500, `Internal error (request ${request.id}); the details are in the service log.`),
    );
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(reply, problem(404, `No resource at ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
