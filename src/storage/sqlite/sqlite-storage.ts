import { mkdirSync } from 'node:fs';
import type { RateLimitStore } from '../rate-limit-ports.ts';
import { SqliteRateLimitStore } from './rate-limit-store.ts';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { toDescriptor } from '../descriptor-row.ts';
import type {
  ConfigResourceStore,
  DeleteOutcome,
  DescriptorAccessChange,
  DescriptorQuery,
  DescriptorRecord,
  NewResource,
  Storage,
  UpdateOutcome,
} from '../ports.ts';
import type { ConversationStore, DeploymentStore, TriggerStore, UserPropertyStore } from '../runtime-ports.ts';
import { SqliteConversationStore } from './conversation-store.ts';
import { SqliteAuditStore } from './audit-store.ts';
import type { AuditStore } from '../audit-ports.ts';
import { SqliteDeploymentStore } from './deployment-store.ts';
import { SqliteSecretStore } from './secret-store.ts';
import type { SecretStore } from '../secret-ports.ts';
import { sqliteMigrations, type Migration } from './migrations.ts';
import { transaction } from './transaction.ts';
import { SqliteTriggerStore } from './trigger-store.ts';
import { SqliteUserPropertyStore } from './user-property-store.ts';

export { transaction } from './transaction.ts';

/** Opens (creating the file and its folder if missing) and migrates an embedded store; `:memory:` works too. */
export async function openSqliteStorage(path: string): Promise<SqliteStorage> {
  let db: DatabaseSync | undefined;
  try {
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true });
    db = new DatabaseSync(path);
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    registerRegexFunction(db);
    migrate(db, sqliteMigrations);
    return new SqliteStorage(db);
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

/** `matches_i(pattern, text)`: 1 when the case-insensitive JS regex `pattern` matches somewhere in `text`. */
function registerRegexFunction(db: DatabaseSync): void {
  const cache = new Map<string, RegExp>();
  db.function('matches_i', { deterministic: true }, (pattern, text) => {
    if (typeof pattern !== 'string' || typeof text !== 'string') return 0;
    let regex = cache.get(pattern);
    if (regex === undefined) {
      if (cache.size >= 256) cache.clear();
      regex = new RegExp(pattern, 'i');
      cache.set(pattern, regex);
    }
    return regex.test(text) ? 1 : 0;
  });
}

export class SqliteStorage implements Storage {
  readonly type = 'sqlite';
  readonly db: DatabaseSync;
  readonly resources: ConfigResourceStore;
  readonly conversations: ConversationStore;
  readonly userProperties: UserPropertyStore;
  readonly deployments: DeploymentStore;
  readonly triggers: TriggerStore;
  readonly secrets: SecretStore;
  readonly audit: AuditStore;
  readonly rateLimits: RateLimitStore;
  readonly #ping: StatementSync;

  constructor(db: DatabaseSync) {
    this.db = db;
    this.resources = new SqliteResourceStore(db);
    this.conversations = new SqliteConversationStore(db);
    this.userProperties = new SqliteUserPropertyStore(db);
    this.deployments = new SqliteDeploymentStore(db);
    this.triggers = new SqliteTriggerStore(db);
    this.secrets = new SqliteSecretStore(db);
    this.audit = new SqliteAuditStore(db);
    this.rateLimits = new SqliteRateLimitStore(db);
    this.#ping = db.prepare('SELECT 1');
  }

  async ping(): Promise<void> {
    this.#ping.get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}

class SqliteResourceStore implements ConfigResourceStore {
  readonly #db: DatabaseSync;
  readonly #sql;

  constructor(db: DatabaseSync) {
    this.#db = db;
    const prepare = (sql: string) => db.prepare(sql);
    this.#sql = {
      insertVersion: prepare(
        'INSERT INTO resource_versions (kind, id, version, body, created_on) VALUES (?, ?, ?, ?, ?)',
      ),
      insertDescriptor: prepare(`INSERT INTO descriptors
        (kind, id, current_version, name, description, created_on, last_modified_on, origin_id, owner_id, space_id, visibility)
        VALUES (:kind, :id, 1, :name, :description, :now, :now, :originId, :ownerId, :spaceId, :visibility)`),
      bumpVersion: prepare(`UPDATE descriptors SET current_version = current_version + 1, last_modified_on = ?
        WHERE kind = ? AND id = ? AND current_version = ? AND NOT deleted RETURNING current_version`),
      flagDeleted: prepare(`UPDATE descriptors SET deleted = 1, last_modified_on = ?
        WHERE kind = ? AND id = ? AND current_version = ? AND NOT deleted RETURNING 1 AS done`),
      read: prepare(`SELECT v.body FROM resource_versions v
        JOIN descriptors d ON d.kind = v.kind AND d.id = v.id
        WHERE v.kind = ? AND v.id = ? AND v.version = ? AND NOT (d.deleted AND d.current_version = v.version)`),
      descriptor: prepare('SELECT * FROM descriptors WHERE kind = ? AND id = ?'),
      descriptorById: prepare('SELECT * FROM descriptors WHERE id = ? LIMIT 1'),
      purgeVersions: prepare('DELETE FROM resource_versions WHERE kind = ? AND id = ?'),
      purgeDescriptor: prepare('DELETE FROM descriptors WHERE kind = ? AND id = ?'),
      byOrigin: prepare(`SELECT * FROM descriptors WHERE kind = ? AND origin_id = ? AND NOT deleted
        ORDER BY last_modified_on DESC, id DESC LIMIT 1`),
      list: prepare(`SELECT * FROM descriptors
        WHERE kind = :kind AND deleted = 0
          AND (:spaceId IS NULL OR space_id = :spaceId)
          AND (:filter = '' OR matches_i(:filter, name) OR matches_i(:filter, description) OR matches_i(:filter, id))
        ORDER BY last_modified_on DESC, id DESC
        LIMIT :limit OFFSET :offset`),
      edit: prepare(`UPDATE descriptors
        SET name = coalesce(:name, name), description = coalesce(:description, description), last_modified_on = :now
        WHERE kind = :kind AND id = :id AND NOT deleted RETURNING *`),
      setAccess: prepare(`UPDATE descriptors
        SET visibility = coalesce(:visibility, visibility), space_id = coalesce(:spaceId, space_id), grants = coalesce(:grants, grants)
        WHERE kind = :kind AND id = :id AND NOT deleted RETURNING *`),
    };
  }

  async create(resource: NewResource): Promise<void> {
    const { kind, id, bodyJson, now, name, description, origin } = resource;
    transaction(this.#db, () => {
      this.#sql.insertDescriptor.run({
        kind,
        id,
        name,
        description,
        now,
        originId: origin.originId ?? null,
        ownerId: origin.ownerId ?? null,
        spaceId: origin.spaceId ?? null,
        visibility: origin.visibility ?? null,
      });
      this.#sql.insertVersion.run(kind, id, 1, bodyJson, now);
    });
  }

  async update(kind: string, id: string, expectedVersion: number, bodyJson: string, now: number): Promise<UpdateOutcome> {
    return transaction(this.#db, () => {
      const row = this.#sql.bumpVersion.get(now, kind, id, expectedVersion);
      if (row === undefined) return this.#miss(kind, id);
      const version = Number(row.current_version);
      this.#sql.insertVersion.run(kind, id, version, bodyJson, now);
      return { status: 'updated', version };
    });
  }

  async read(kind: string, id: string, version: number): Promise<string | undefined> {
    const row = this.#sql.read.get(kind, id, version);
    return row === undefined ? undefined : String(row.body);
  }

  async descriptor(kind: string, id: string): Promise<DescriptorRecord | undefined> {
    const row = this.#sql.descriptor.get(kind, id);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async descriptorById(id: string): Promise<DescriptorRecord | undefined> {
    const row = this.#sql.descriptorById.get(id);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async softDelete(kind: string, id: string, expectedVersion: number, now: number): Promise<DeleteOutcome> {
    const row = this.#sql.flagDeleted.get(now, kind, id, expectedVersion);
    return row === undefined ? this.#miss(kind, id) : { status: 'deleted' };
  }

  async purge(kind: string, id: string): Promise<boolean> {
    return transaction(this.#db, () => {
      this.#sql.purgeVersions.run(kind, id);
      return Number(this.#sql.purgeDescriptor.run(kind, id).changes) > 0;
    });
  }

  async findByOrigin(kind: string, originId: string): Promise<DescriptorRecord | undefined> {
    const row = this.#sql.byOrigin.get(kind, originId);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async listDescriptors(kind: string, query: DescriptorQuery): Promise<DescriptorRecord[]> {
    const rows = this.#sql.list.all({
      kind,
      filter: query.filter,
      spaceId: query.spaceId ?? null,
      limit: query.limit,
      offset: query.index * query.limit,
    });
    return rows.map(toDescriptor);
  }

  async editDescriptor(
    kind: string,
    id: string,
    changes: { readonly name?: string | undefined; readonly description?: string | undefined },
    now: number,
  ): Promise<DescriptorRecord | undefined> {
    const row = this.#sql.edit.get({
      kind,
      id,
      name: changes.name ?? null,
      description: changes.description ?? null,
      now,
    });
    return row === undefined ? undefined : toDescriptor(row);
  }

  async setAccess(kind: string, id: string, access: DescriptorAccessChange): Promise<DescriptorRecord | undefined> {
    const row = this.#sql.setAccess.get({
      kind, id, visibility: access.visibility ?? null, spaceId: access.spaceId ?? null, grants: access.grants ?? null,
    });
    return row === undefined ? undefined : toDescriptor(row);
  }

  /** Why a conditional write matched nothing: unknown or deleted -> not-found, otherwise stale. */
  #miss(kind: string, id: string): { status: 'not-found' } | { status: 'stale'; currentVersion: number } {
    const row = this.#sql.descriptor.get(kind, id);
    if (row === undefined || row.deleted === 1) return { status: 'not-found' };
    return { status: 'stale', currentVersion: Number(row.current_version) };
  }
}
