import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Migration } from '../migration.ts';
import type { Storage, Stores } from '../ports.ts';
import { SqliteGroupDiscussionStore } from './group-discussion-store.ts';
import { SqliteChannelMessageStore } from './channel-message-store.ts';
import { SqliteScheduleRunStore } from './schedule-run-store.ts';
import { SqliteAuditStore } from './audit-store.ts';
import { SqliteConversationStore } from './conversation-store.ts';
import { SqliteDeploymentStore } from './deployment-store.ts';
import { GroupCommit } from './group-commit.ts';
import { Checkpointer } from './checkpointer.ts';
import { SqliteKnowledgeStore } from './knowledge-store.ts';
import { sqliteMigrations } from './migrations.ts';
import { SqliteRateLimitStore } from './rate-limit-store.ts';
import { SqliteResourceStore } from './resource-store.ts';
import { SqliteSecretStore } from './secret-store.ts';
import { SqliteGate, transaction } from './transaction.ts';
import { SqliteTranscriptRunStore } from './transcript-run-store.ts';
import { SqliteTriggerStore } from './trigger-store.ts';
import { SqliteApiKeyStore, SqliteChatThreadStore } from './openai-store.ts';
import { SqliteUserPropertyStore } from './user-property-store.ts';
import { SqliteUserMemoryStore } from './user-memory-store.ts';

/** Page cache of the serving connection: the hot conversations' pages stay in memory (the default is 2 MiB). */
const CACHE_KIB = 16_384;

export interface SqliteStorage extends Storage {
  readonly db: DatabaseSync;
}

/** Opens (creating the file and its folder if missing) and migrates an embedded store; `:memory:` works too. */
export async function openSqliteStorage(path: string): Promise<SqliteStorage> {
  let db: DatabaseSync | undefined;
  try {
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true });
    db = new DatabaseSync(path);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
      PRAGMA cache_size = -${CACHE_KIB};`);
    registerContainsFunction(db);
    migrate(db, sqliteMigrations);
    const inFile = db.location() !== null;
    if (inFile) db.exec('PRAGMA wal_autocheckpoint = 0');
    return sqliteStorage(db, inFile ? new Checkpointer(path) : undefined);
  } catch (error) {
    if (db?.isOpen) db.close();
    throw new Error(`SQLite store at ${path} cannot be opened: ${(error as Error).message}`);
  }
}

export function migrate(db: DatabaseSync, migrations: readonly Migration[]): void {
  transaction(db, () => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_on INTEGER NOT NULL)`);
    const row = db.prepare('SELECT coalesce(max(version), 0) AS version FROM schema_migrations').get();
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_on) VALUES (?, ?, ?)');
    for (let version = Number(row?.version) + 1; version <= migrations.length; version++) {
      const migration = migrations[version - 1]!;
      db.exec(migration.sql);
      record.run(version, migration.name, Date.now());
    }
  });
}

/**
 * `contains_i(text, needle)`: 1 when `needle` occurs in `text`, ignoring case (Unicode, unlike SQLite's `lower`).
 * Plain text, never a pattern: a caller's filter cannot make the search backtrack (issue 13, ReDoS).
 */
function registerContainsFunction(db: DatabaseSync): void {
  db.function('contains_i', { deterministic: true }, (text, needle) => {
    if (typeof text !== 'string' || typeof needle !== 'string') return 0;
    return text.toLowerCase().includes(needle.toLowerCase()) ? 1 : 0;
  });
}

/**
 * The stores share one connection. A transaction's work gets them as they are; everyone else gets them through
 * the gate, so they wait while a transaction holds the connection (see `SqliteGate`).
 */
function sqliteStorage(db: DatabaseSync, checkpointer: Checkpointer | undefined): SqliteStorage {
  const gate = new SqliteGate(db);
  const writes = new GroupCommit(db);
  const stores: Stores = {
    resources: new SqliteResourceStore(db, writes),
    conversations: new SqliteConversationStore(db, writes),
    userProperties: new SqliteUserPropertyStore(db, writes),
    userMemories: new SqliteUserMemoryStore(db, writes),
    deployments: new SqliteDeploymentStore(db, writes),
    triggers: new SqliteTriggerStore(db, writes),
    secrets: new SqliteSecretStore(db, writes),
    audit: new SqliteAuditStore(db, writes),
    rateLimits: new SqliteRateLimitStore(db, writes),
    transcriptRuns: new SqliteTranscriptRunStore(db, writes),
    apiKeys: new SqliteApiKeyStore(db, writes),
    chatThreads: new SqliteChatThreadStore(db, writes),
    knowledge: new SqliteKnowledgeStore(db, writes),
    scheduleRuns: new SqliteScheduleRunStore(db, writes),
    channelMessages: new SqliteChannelMessageStore(db, writes),
    groupDiscussions: new SqliteGroupDiscussionStore(db, writes),
  };
  const guarded = Object.fromEntries(
    Object.entries(stores).map(([name, store]) => [name, gate.guard(store)]),
  ) as unknown as Stores;
  const ping = db.prepare('SELECT 1');
  return {
    type: 'sqlite',
    db,
    ...guarded,
    transaction: (work) => gate.transaction(() => work(stores)),
    ping: async () => {
      ping.get();
    },
    close: () =>
      gate.exclusive(async () => {
        if (db.isOpen) db.close();
        await checkpointer?.close();
      }),
  };
}
