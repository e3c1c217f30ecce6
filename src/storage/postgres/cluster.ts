import pg from 'pg';
import { QueryWatchdog } from './query-watchdog.ts';
import type { ClusterCoordination } from '../cluster-ports.ts';
import { SessionTryLocks } from './session-locks.ts';
import { checkOut } from './transaction.ts';

/**
 * Cluster coordination on PostgreSQL.
 * - A turn holds an advisory lock on its conversation. First it tries for a session-level lock on a shared
 *   connection, batched with the other tries and releases of its tick (`SessionTryLocks`: no round trip of its
 *   own in the common case, nobody else holding or waiting for the conversation). Not granted there, it waits
 *   for a transaction-scoped one (`pg_advisory_xact_lock`); PostgreSQL grants waiting lock requests in the order
 *   they arrived, and a try-lock does not pass them. The waiting lock lives on a connection of a pool of its own,
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
  readonly #lockWaitLimitMillis: number;
  /** Bounds the lock connections' queries (`lockWaitLimitMillis`). */
  readonly #watchdog: QueryWatchdog | undefined;
  /** By claim: a session's idle timeout is its claim. */
  readonly #tryLocks = new Map<number, SessionTryLocks>();
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  #listener: pg.Client | undefined;
  #listening: Promise<void> | undefined;
  #closed = false;
  #relistenTimer: NodeJS.Timeout | undefined;

  /**
   * `lockWaitLimitMillis` bounds every query of the lock connections, waiting for a lock included: past it the
   * query fails and its connection is closed. It must be well above the longest legitimate wait for a
   * conversation's lock (the turns of other instances before it, each at most the turn timeout plus the claim).
   */
  constructor(url: string, lockConnections = 20, lockWaitLimitMillis = 0) {
    this.#url = url;
    this.#lockWaitLimitMillis = lockWaitLimitMillis;
    this.#locks = new pg.Pool({
      connectionString: url,
      max: lockConnections,
      connectionTimeoutMillis: 10_000,
    });
    this.#locks.on('error', () => {});
    this.#watchdog = lockWaitLimitMillis > 0 ? new QueryWatchdog(lockWaitLimitMillis) : undefined;
    this.#watchdog?.watchPool(this.#locks);
  }

  async withConversationLock<T>(conversationId: string, claimMillis: number, work: () => Promise<T>): Promise<T> {
    const tryLocks = this.#tryLocksFor(claimMillis);
    const session = await tryLocks.tryLock(conversationId);
    if (session) {
      try {
        return await work();
      } finally {
        await tryLocks.unlock(conversationId, session);
      }
    }
    const locked = await this.#holdingAdvisoryLock(
      (key) => `pg_advisory_xact_lock(hashtextextended(${key}, ${CONVERSATION_LOCKS}))`,
      conversationId,
      claimMillis,
      work,
    );
    return (locked as { value: T }).value;
  }

  #tryLocksFor(claimMillis: number): SessionTryLocks {
    let tryLocks = this.#tryLocks.get(claimMillis);
    if (!tryLocks) {
      tryLocks = new SessionTryLocks(this.#url, claimMillis, this.#lockWaitLimitMillis, CONVERSATION_LOCKS);
      this.#tryLocks.set(claimMillis, tryLocks);
    }
    return tryLocks;
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
    const client = await checkOut(this.#locks);
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
    await Promise.all([...this.#tryLocks.values()].map((tryLocks) => tryLocks.close()));
    await this.#locks.end().catch(() => undefined);
    this.#watchdog?.close();
  }
}
