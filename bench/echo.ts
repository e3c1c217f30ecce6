import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EchoServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The baseline: a bare `node:http` server that answers every request with 200 and the request's own body as
 * JSON (`{}` for an empty body), over keep-alive connections. Everything the service does beyond this is what
 * the ratios show.
 */
export async function startEchoServer(port = 0): Promise<EchoServer> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length === 0 ? '{}' : Buffer.concat(chunks).toString('utf8');
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    });
  });
  // Fastify's default, so both servers keep connections alike.
  server.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: listening } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${listening}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
