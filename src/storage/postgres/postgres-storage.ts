import pg from 'pg';
import { QueryWatchdog } from './query-watchdog.ts';
import type { Migration } from '../migration.ts';
import type { Storage, Stores } from '../ports.ts';
import { redactUrl, scrubSecrets } from '../redact.ts';
import { PostgresGroupDiscussionStore } from './group-discussion-store.ts';
import { PostgresChannelMessageStore } from './channel-message-store.ts';
import { PostgresScheduleRunStore } from './schedule-run-store.ts';
import { PostgresAuditStore } from './audit-store.ts';
import { PostgresConversationStore } from './conversation-store.ts';
import { PostgresDeploymentStore } from './deployment-store.ts';
import { PostgresKnowledgeStore } from './knowledge-store.ts';
import { postgresMigrations } from './migrations.ts';
import { PostgresRateLimitStore } from './rate-limit-store.ts';
import { PostgresResourceStore } from './resource-store.ts';
import { PostgresSecretStore } from './secret-store.ts';
import { checkOut, inTransaction, transactionOn, type Queryable } from './transaction.ts';
import { PostgresTranscriptRunStore } from './transcript-run-store.ts';
import { PostgresTriggerStore } from './trigger-store.ts';
import { PostgresApiKeyStore, PostgresChatThreadStore } from './openai-store.ts';
import { PostgresUserPropertyStore } from './user-property-store.ts';
import { PostgresUserMemoryStore } from './user-memory-store.ts';

export interface PostgresStorage extends Storage {
  readonly pool: pg.Pool;
}

/** Arbitrary constant key of the advisory lock that serialises migrations across instances sharing a database. */
const MIGRATION_LOCK_KEY = 7_262_871_001;

/**
 * Opens a pool and migrates the schema. Rejects with an Error naming the store (URL without password) and
 * the cause; the password never appears in the message.
 */
export async function openPostgresStorage(url: string, queryTimeoutMillis = 0): Promise<PostgresStorage> {
  let pool: pg.Pool | undefined;
  // Client-side: a query whose answer does not come (the network cut, the server frozen) fails, and the pool
  // closes its connection; a server that answers slowly but does answer is bounded the same way.
  const watchdog = queryTimeoutMillis > 0 ? new QueryWatchdog(queryTimeoutMillis) : undefined;
  try {
    pool = new pg.Pool({
      connectionString: url,
      max: 10,
      connectionTimeoutMillis: 10_000,
    });
    watchdog?.watchPool(pool);
    // An idle client losing its connection emits 'error' on the pool; unhandled it would end the process.
    // The next query gets a fresh client (or fails, which `ping` reports).
    pool.on('error', () => {});
    await migrate(pool, postgresMigrations);
    return postgresStorage(pool, watchdog);
  } catch (error) {
    watchdog?.close();
    await pool?.end().catch(() => {});
    const cause = error as Error & { code?: string };
    const detail = [cause.code, cause.message].filter(Boolean).join(' ');
    throw new Error(scrubSecrets(`PostgreSQL store at ${redactUrl(url)} cannot be opened: ${detail}`, url));
  }
}

/** Applies missing migrations, each in its own transaction, under a database-wide advisory lock. */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[]): Promise<void> {
  const client = await checkOut(pool);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_on bigint NOT NULL)`);
      const { rows } = await client.query('SELECT coalesce(max(version), 0) AS version FROM schema_migrations');
      for (let version = Number(rows[0].version) + 1; version <= migrations.length; version++) {
        const migration = migrations[version - 1]!;
        await transactionOn(client, async () => {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_on) VALUES ($1, $2, $3)', [
            version,
            migration.name,
            Date.now(),
          ]);
        });
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

/** The stores sending their statements to `db`: the pool, or the client of a transaction. */
function storesOver(db: Queryable): Stores {
  return {
    resources: new PostgresResourceStore(db),
    conversations: new PostgresConversationStore(db),
    userProperties: new PostgresUserPropertyStore(db),
    userMemories: new PostgresUserMemoryStore(db),
    deployments: new PostgresDeploymentStore(db),
    triggers: new PostgresTriggerStore(db),
    secrets: new PostgresSecretStore(db),
    audit: new PostgresAuditStore(db),
    rateLimits: new PostgresRateLimitStore(db),
    transcriptRuns: new PostgresTranscriptRunStore(db),
    apiKeys: new PostgresApiKeyStore(db),
    chatThreads: new PostgresChatThreadStore(db),
    knowledge: new PostgresKnowledgeStore(db),
    scheduleRuns: new PostgresScheduleRunStore(db),
    channelMessages: new PostgresChannelMessageStore(db),
    groupDiscussions: new PostgresGroupDiscussionStore(db),
  };
}

function postgresStorage(pool: pg.Pool, watchdog: QueryWatchdog | undefined): PostgresStorage {
  let closed = false;
  return {
    type: 'postgres',
    pool,
    ...storesOver(pool),
    transaction: (work) => inTransaction(pool, (client) => work(storesOver(client))),
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: async () => {
      if (closed) return;
      closed = true;
      watchdog?.close();
      await pool.end();
    },
  };
}
