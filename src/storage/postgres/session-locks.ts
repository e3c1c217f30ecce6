import pg from 'pg';
import { QueryWatchdog } from './query-watchdog.ts';

/** After the session could not be opened, try-locks answer "not granted" (the waiting path) this long. */
const RETRY_AFTER_MILLIS = 1000;

/**
 * Session-level advisory try-locks on one connection of their own: the acquisitions and releases of one tick go to
 * the server in one round trip. A try-lock is granted only when nobody holds the lock (PostgreSQL hands a released
 * lock to its first waiter at once, so a try-lock cannot pass them); not granted, the caller waits in line.
 *
 * The session runs with `idle_session_timeout` = the claim: a holder that stops answering (frozen, cut off)
 * sends nothing on it, and the server ends the session and so releases its locks, as it does for a lock held in
 * a transaction. A session that fails is dropped with its locks; the next try-lock opens a new one.
 */
export class SessionTryLocks {
  readonly #config: pg.ClientConfig;
  /** Fails a query of the session that gets no answer in time (`QueryWatchdog`): the session is then dropped. */
  readonly #watchdog: QueryWatchdog | undefined;
  readonly #lockSpace: number;
  #session: Promise<pg.Client> | undefined;
  #current: pg.Client | undefined;
  #unavailableUntil = 0;
  #closed = false;
  /**
   * Keys held or asked for here. A session lock is re-entrant: granted again to its own session, a second request
   * would pass those waiting for the key elsewhere, so it waits in line instead.
   */
  readonly #held = new Set<string>();
  #acquiring: Array<{ key: string; answer: (session: pg.Client | undefined) => void }> = [];
  #releasing: Array<{ key: string; session: pg.Client; done: () => void }> = [];
  /** The flush under way: the next one starts after it, so the session never gets a query while one runs. */
  #flushing: Promise<void> = Promise.resolve();

  /** `lockSpace` is the second key of `hashtextextended`, as on the waiting path. */
  constructor(url: string, claimMillis: number, queryTimeoutMillis: number, lockSpace: number) {
    this.#lockSpace = lockSpace;
    this.#config = {
      connectionString: url,
      options: `-c idle_session_timeout=${Math.max(1000, Math.ceil(claimMillis))}`,
    };
    this.#watchdog = queryTimeoutMillis > 0 ? new QueryWatchdog(queryTimeoutMillis) : undefined;
  }

  /** The session now holding `key`, or undefined: held or waited for elsewhere, asked for here already, no session. */
  tryLock(key: string): Promise<pg.Client | undefined> {
    if (this.#closed || this.#held.has(key) || Date.now() < this.#unavailableUntil) return Promise.resolve(undefined);
    this.#held.add(key);
    return new Promise((answer) => {
      this.#flushSoon();
      this.#acquiring.push({ key, answer });
    });
  }

  /** Releases `key` taken on `session` (gone already with a session lost since); settles once it is released. */
  unlock(key: string, session: pg.Client): Promise<void> {
    return new Promise((done) => {
      this.#flushSoon();
      this.#releasing.push({ key, session, done });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#watchdog?.close();
    if (this.#current) await this.#drop(this.#current);
  }

  /**
   * Flushes at the next `setImmediate`, or once the flush under way is done: what arrives meanwhile goes in one
   * round trip after it (one client runs one query at a time; pg 9 refuses a query sent while another runs).
   */
  #flushSoon(): void {
    if (this.#acquiring.length + this.#releasing.length > 0) return;
    setImmediate(() => {
      this.#flushing = this.#flushing.then(() => this.#flush()).catch(() => undefined);
    });
  }

  async #flush(): Promise<void> {
    const acquiring = this.#acquiring;
    const releasing = this.#releasing;
    this.#acquiring = [];
    this.#releasing = [];
    let session: pg.Client | undefined;
    let granted: boolean[] = [];
    try {
      session = await this.#connect();
      const client = session;
      const keys = (list: ReadonlyArray<{ key: string }>) =>
        `unnest(ARRAY[${list.map(({ key }) => client.escapeLiteral(key)).join(', ')}]::text[])`;
      const live = releasing.filter((release) => release.session === client);
      const results = (await client.query(
        `SELECT pg_advisory_unlock(hashtextextended(k, ${this.#lockSpace})) FROM ${keys(live)} AS k;
         SELECT pg_try_advisory_lock(hashtextextended(k, ${this.#lockSpace})) AS granted
         FROM ${keys(acquiring)} WITH ORDINALITY AS t(k, n) ORDER BY n`,
      )) as unknown as pg.QueryResult<{ granted: boolean }>[];
      granted = results[1]!.rows.map((row) => row.granted);
    } catch {
      // Its locks end with the session; the acquisitions wait in line instead.
      if (session) await this.#drop(session);
    }
    for (const release of releasing) {
      this.#held.delete(release.key);
      release.done();
    }
    for (const [i, acquisition] of acquiring.entries()) {
      if (granted[i] === true) {
        acquisition.answer(session);
      } else {
        this.#held.delete(acquisition.key);
        acquisition.answer(undefined);
      }
    }
  }

  #connect(): Promise<pg.Client> {
    this.#session ??= (async () => {
      const client = new pg.Client(this.#config);
      // The idle-session timeout, a restart, the network: the session is dropped and the next flush opens another.
      client.on('error', () => void this.#drop(client));
      client.on('end', () => void this.#drop(client));
      try {
        await client.connect();
        this.#watchdog?.watch(client);
      } catch (error) {
        this.#session = undefined;
        this.#unavailableUntil = Date.now() + RETRY_AFTER_MILLIS;
        await client.end().catch(() => undefined);
        throw error;
      }
      this.#current = client;
      return client;
    })();
    return this.#session;
  }

  async #drop(client: pg.Client): Promise<void> {
    if (this.#current === client) {
      this.#current = undefined;
      this.#session = undefined;
    }
    await client.end().catch(() => undefined);
  }
}
