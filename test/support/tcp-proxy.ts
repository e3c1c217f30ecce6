import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server (PostgreSQL in the fault tests), to take the server away and bring it
 * back without touching it: `cut()` drops every open connection and refuses new ones (the port stops listening,
 * as a restarting server's does); `restore()` listens on the same port again.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections made through the proxy so far. */
  readonly connectionsMade: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let connectionsMade = 0;
  const relay = (client: Socket) => {
    connectionsMade++;
    const upstream = connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  };
  let server: Server = createServer(relay);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const stop = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const port = await listen(0);
  return {
    port,
    get connectionsMade() {
      return connectionsMade;
    },
    async cut() {
      const closed = stop();
      for (const socket of open) socket.destroy();
      await closed;
    },
    async restore() {
      server = createServer(relay);
      await listen(port);
    },
    async close() {
      const closed = stop();
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
}
