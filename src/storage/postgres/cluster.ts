import pg from 'pg';
import type { ClusterCoordination } from '../cluster-ports.ts';

/**
 * Cluster coordination on PostgreSQL.
 * - A turn holds a transaction-scoped advisory lock on its conversation (`pg_advisory_xact_lock`); PostgreSQL
 *   grants waiting lock requests in the order they arrived. The lock lives on a connection of a pool of its own,
 *   so turns waiting for locks can never starve the queries of the turns that hold them.
 * - A periodic job (a retention sweep) runs under a try-lock of its own name: an instance that finds it taken skips
 *   that run.
 * - A holder that stops answering is cut off by `idle_in_transaction_session_timeout` (the claim), and a holder
 *   that dies loses its connection: either way the lock is released and the next turn proceeds.
 * - Notifications use LISTEN/NOTIFY on one dedicated connection.
 */
/** Second keys of `hashtextextended`, so a conversation id and a job name never share an advisory lock. */
const CONVERSATION_LOCKS = 7262;
const JOB_LOCKS = 7263;

export class PostgresCluster implements ClusterCoordination {
  readonly shared = true;
  readonly #locks: pg.Pool;
  readonly #url: string;
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  #listener: pg.Client | undefined;
  #listening: Promise<void> | undefined;
  #closed = false;

  constructor(url: string, lockConnections = 20) {
    this.#url = url;
    this.#locks = new pg.Pool({ connectionString: url, max: lockConnections, connectionTimeoutMillis: 10_000 });
    this.#locks.on('error', () => {});
  }

  async withConversationLock<T>(conversationId: string, claimMillis: number, work: () => Promise<T>): Promise<T> {
    const locked = await this.#holdingAdvisoryLock(
      (key) => `pg_advisory_xact_lock(hashtextextended(${key}, ${CONVERSATION_LOCKS}))`,
      conversationId,
      claimMillis,
      work,
    );
    return (locked as { value: T }).value;
  }

  async runExclusive(jobName: string, claimMillis: number, work: () => Promise<void>): Promise<boolean> {
    const locked = await this.#holdingAdvisoryLock(
      (key) => `pg_try_advisory_xact_lock(hashtextextended(${key}, ${JOB_LOCKS})) AS locked`,
      jobName,
      claimMillis,
      work,
    );
    return locked !== undefined;
  }

  /**
   * Takes an advisory lock inside a transaction of a lock-pool connection, runs `work` while holding it and
   * releases it with the transaction. Answers undefined when a try-lock (`... AS locked`) was not granted.
   */
  async #holdingAdvisoryLock<T>(
    lockCall: (quotedKey: string) => string,
    key: string,
    claimMillis: number,
    work: () => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    const client = await this.#locks.connect();
    let healthy = true;
    try {
      // One round trip: begin, bound the claim, take (or try) the lock.
      const results = (await client.query(
        `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1000, Math.ceil(claimMillis))};
         SELECT ${lockCall(client.escapeLiteral(key))}`,
      )) as unknown as pg.QueryResult<{ locked?: boolean }>[];
      try {
        if (results.at(-1)?.rows[0]?.locked === false) return undefined;
        return { value: await work() };
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
      .catch(() => undefined);
    await this.#listening;
  }

  async #connectListener(): Promise<pg.Client> {
    if (this.#listener) return this.#listener;
    const client = new pg.Client({ connectionString: this.#url });
    client.on('notification', (message) => {
      for (const listener of this.#listeners.get(message.channel) ?? []) listener(message.payload ?? '');
    });
    client.on('error', () => {
      // The connection broke: listen again on a new one (notifications sent meanwhile are lost; the
      // periodic reconciliation of deployments covers that gap).
      this.#listener = undefined;
      if (!this.#closed) setTimeout(() => this.#relisten(), 1000).unref();
    });
    await client.connect();
    this.#listener = client;
    return client;
  }

  #relisten(): void {
    this.#listening = undefined;
    for (const channel of this.#listeners.keys()) void this.#listen(channel);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#listener?.end().catch(() => undefined);
    await this.#locks.end().catch(() => undefined);
  }
}
