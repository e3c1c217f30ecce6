import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Settings } from '../settings.ts';
import { type Problem, problem } from './problems.ts';

/**
 * What a client may hold of the server (issue 13: a body trickled a byte at a time stayed open for good, and
 * ~20k such sockets exhausted the file descriptors): time limits on receiving a request, and caps on the
 * connections open at once, in total and per client address.
 */

/** Fastify options: a request must arrive whole in time; late ones answer 408 (a JSON problem) and are closed. */
export function requestTimeoutOptions(settings: Settings): {
  readonly requestTimeout: number;
  readonly http: ServerOptions;
  readonly clientErrorHandler: typeof answerClientError;
} {
  const requestTimeout = settings['svc.http.request-timeout-millis'];
  // Node refuses headers given longer than the whole request, and looks for late requests every interval.
  const headersTimeout = Math.min(settings['svc.http.headers-timeout-millis'], requestTimeout);
  return {
    requestTimeout,
    http: { headersTimeout, connectionsCheckingInterval: Math.min(1_000, headersTimeout) },
    clientErrorHandler: answerClientError,
  };
}

/** A request the HTTP parser gave up on (late, malformed, headers too large): a problem, then the socket closes. */
function answerClientError(this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ err: error, remoteAddress: socket.remoteAddress }, 'client error');
  if (socket.writable) {
    const answer = clientProblem(error);
    const body = JSON.stringify(answer);
    socket.write(
      `HTTP/1.1 ${answer.status} ${answer.title}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function clientProblem(error: NodeJS.ErrnoException): Problem {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem(408, 'The request did not arrive in time; send its headers and body without pausing.');
    case 'HPE_HEADER_OVERFLOW':
      return problem(431, 'The request headers are too large.');
    default:
      return problem(400, 'The request is not well-formed HTTP.');
  }
}

/**
 * Caps the open connections, in total and per client address (0 = no cap). A connection over a cap is closed as
 * it opens, before anything of it is read, so one client holds at most its share while others keep being served.
 * Refusals are logged as a warning at most once a minute.
 */
export function limitConnections(server: Server, settings: Settings, log: FastifyBaseLogger): void {
  const total = settings['svc.http.max-connections'];
  const perAddress = settings['svc.http.max-connections-per-address'];
  let refused = 0;
  let lastWarning = 0;
  const noteRefusal = (reason: string) => {
    refused += 1;
    if (Date.now() - lastWarning < 60_000) return;
    log.warn({ refused, reason }, 'connections refused: over the connection limit');
    lastWarning = Date.now();
    refused = 0;
  };
  if (total > 0) {
    // Node closes a connection over `maxConnections` itself, before 'connection', and reports it as 'drop'.
    server.maxConnections = total;
    server.on('drop', () => noteRefusal(`svc.http.max-connections (${total})`));
  }
  if (perAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = open.get(address) ?? 0;
    if (count >= perAddress) {
      noteRefusal(`svc.http.max-connections-per-address (${perAddress})`);
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
