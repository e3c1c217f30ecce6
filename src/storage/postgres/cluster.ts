import pg from 'pg';
import type { ClusterCoordination } from '../cluster-ports.ts';
import { checkOut } from './transaction.ts';

/**
 * Cluster coordination on PostgreSQL.
 * - A turn holds a transaction-scoped advisory lock on its conversation (`pg_advisory_xact_lock`); PostgreSQL
 *   grants waiting lock requests in the order they arrived. The lock lives on a connection of a pool of its own,
 *   so turns waiting for locks can never starve the queries of the turns that hold them.
 * - A holder that stops answering is cut off by `idle_in_transaction_session_timeout` (the claim), and a holder
 *   that dies loses its connection: either way the lock is released and the next turn proceeds.
 * - Notifications use LISTEN/NOTIFY on one dedicated connection.
 */
export class PostgresCluster implements ClusterCoordination {
  readonly shared = true;
  readonly #locks: pg.Pool;
  readonly #url: string;
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  #listener: pg.Client | undefined;
  #listening: Promise<void> | undefined;
  #closed = false;
  #relistenTimer: NodeJS.Timeout | undefined;

  constructor(url: string, lockConnections = 20) {
    this.#url = url;
    this.#locks = new pg.Pool({ connectionString: url, max: lockConnections, connectionTimeoutMillis: 10_000 });
    this.#locks.on('error', () => {});
  }

  async withConversationLock<T>(conversationId: string, claimMillis: number, work: () => Promise<T>): Promise<T> {
    const client = await checkOut(this.#locks);
    let healthy = true;
    try {
      // One round trip: begin, bound the claim, wait for the lock.
      await client.query(
        `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, Math.ceil(claimMillis))};
         SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(conversationId)}, 7262))`,
      );
      try {
        return await work();
      } finally {
        await client.query('COMMIT').catch(() => {
          healthy = false; // the claim expired and the server ended the session: the lock is gone already
        });
      }
    } catch (error) {
      healthy = false;
      throw error;
    } finally {
      client.release(!healthy);
    }
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.#locks.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  subscribe(channel: string, listener: (payload: string) => void): () => void {
    const listeners = this.#listeners.get(channel) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(channel, listeners);
    void this.#listen(channel);
    return () => listeners.delete(listener);
  }

  /** Ready once every channel subscribed so far is listened to (tests and start-up wait for it). */
  async ready(): Promise<void> {
    await this.#listening;
  }

  async #listen(channel: string): Promise<void> {
    this.#listening = (this.#listening ?? Promise.resolve())
      .then(async () => {
        const client = await this.#connectListener();
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      })
      .catch(() => this.#listenAgainLater());
    await this.#listening;
  }

  async #connectListener(): Promise<pg.Client> {
    if (this.#listener) return this.#listener;
    const client = new pg.Client({ connectionString: this.#url });
    client.on('notification', (message) => {
      for (const listener of this.#listeners.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    // The connection broke: listen again on a new one (notifications sent meanwhile are lost; the periodic
    // reconciliation of deployments and the vault's cache expiry cover that gap).
    const lost = () => {
      if (this.#listener === client) this.#listener = undefined;
      this.#listenAgainLater();
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect().catch(async (error: unknown) => {
      await client.end().catch(() => undefined);
      throw error;
    });
    this.#listener = client;
    return client;
  }

  /** Listens to every channel again in a second; tried again each second while PostgreSQL cannot be reached. */
  #listenAgainLater(): void {
    if (this.#closed || this.#relistenTimer) return;
    this.#relistenTimer = setTimeout(() => {
      this.#relistenTimer = undefined;
      this.#listening = undefined;
      for (const channel of this.#listeners.keys()) void this.#listen(channel);
    }, 1000);
    this.#relistenTimer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#relistenTimer);
    await this.#listener?.end().catch(() => undefined);
    await this.#locks.end().catch(() => undefined);
  }
}
