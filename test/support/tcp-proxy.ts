import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server (PostgreSQL in the fault tests), to take the server away and bring it
 * back without touching it: `cut()` drops every open connection and refuses new ones (the port stops listening,
 * as a restarting server's does); `restore()` listens on the same port again. `freeze()` keeps every connection
 * open but passes nothing on, in either direction, new connections included (a network partition, a frozen
 * server); `thaw()` lets everything through again.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections made through the proxy so far. */
  readonly connectionsMade: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let connectionsMade = 0;
  let frozen = false;
  const join = ({ client, upstream }: Pair) => {
    client.pipe(upstream).pipe(client);
  };
  const split = ({ client, upstream }: Pair) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  const relay = (client: Socket) => {
    connectionsMade++;
    const pair = { client, upstream: connect(targetPort, targetHost) };
    pairs.add(pair);
    for (const socket of [pair.client, pair.upstream]) {
      socket.on('close', () => pairs.delete(pair));
      socket.on('error', () => {
        pair.client.destroy();
        pair.upstream.destroy();
      });
    }
    if (frozen) split(pair);
    else join(pair);
  };
  const destroyAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
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
      destroyAll();
      await closed;
    },
    async restore() {
      server = createServer(relay);
      await listen(port);
    },
    freeze() {
      frozen = true;
      for (const pair of pairs) split(pair);
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) join(pair);
    },
    async close() {
      const closed = stop();
      destroyAll();
      await closed;
    },
  };
}
