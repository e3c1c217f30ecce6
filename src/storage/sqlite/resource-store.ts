import type { DatabaseSync } from 'node:sqlite';
import { toDescriptor } from '../descriptor-row.ts';
import type {
  ConfigResourceStore,
  DeleteOutcome,
  DescriptorAccessChange,
  DescriptorChanges,
  DescriptorQuery,
  DescriptorRecord,
  NewResource,
  UpdateOutcome,
} from '../ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  insertVersion: 'INSERT INTO resource_versions (kind, id, version, body, created_on) VALUES (?, ?, ?, ?, ?)',
  insertDescriptor: `INSERT INTO descriptors
    (kind, id, current_version, name, description, created_on, last_modified_on, origin_id, owner_id, space_id, visibility)
    VALUES (:kind, :id, 1, :name, :description, :now, :now, :originId, :ownerId, :spaceId, :visibility)`,
  bumpVersion: `UPDATE descriptors SET current_version = current_version + 1, last_modified_on = ?
    WHERE kind = ? AND id = ? AND current_version = ? AND NOT deleted RETURNING current_version`,
  flagDeleted: `UPDATE descriptors SET deleted = 1, last_modified_on = ?
    WHERE kind = ? AND id = ? AND current_version = ? AND NOT deleted RETURNING 1 AS done`,
  read: `SELECT v.body FROM resource_versions v
    JOIN descriptors d ON d.kind = v.kind AND d.id = v.id
    WHERE v.kind = ? AND v.id = ? AND v.version = ? AND NOT (d.deleted AND d.current_version = v.version)`,
  descriptor: 'SELECT * FROM descriptors WHERE kind = ? AND id = ?',
  descriptorById: 'SELECT * FROM descriptors WHERE id = ? LIMIT 1',
  purgeVersions: 'DELETE FROM resource_versions WHERE kind = ? AND id = ?',
  purgeDescriptor: 'DELETE FROM descriptors WHERE kind = ? AND id = ?',
  byOrigin: `SELECT * FROM descriptors WHERE kind = ? AND origin_id = ? AND NOT deleted
    ORDER BY last_modified_on DESC, id DESC LIMIT 1`,
  list: `SELECT * FROM descriptors
    WHERE kind = :kind AND deleted = 0
      AND (:spaceId IS NULL OR space_id = :spaceId)
      AND (:filter = '' OR contains_i(name, :filter) OR contains_i(description, :filter) OR contains_i(id, :filter))
    ORDER BY last_modified_on DESC, id DESC
    LIMIT :limit OFFSET :offset`,
  edit: `UPDATE descriptors
    SET name = coalesce(:name, name), description = coalesce(:description, description), last_modified_on = :now
    WHERE kind = :kind AND id = :id AND NOT deleted RETURNING *`,
  setAccess: `UPDATE descriptors
    SET visibility = coalesce(:visibility, visibility), space_id = coalesce(:spaceId, space_id), grants = coalesce(:grants, grants)
    WHERE kind = :kind AND id = :id AND NOT deleted RETURNING *`,
};

/** Versioned configuration resources and their descriptors in SQLite. */
export class SqliteResourceStore extends SqliteStore<keyof typeof STATEMENTS> implements ConfigResourceStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async create(resource: NewResource): Promise<void> {
    const { kind, id, bodyJson, now, name, description, origin } = resource;
    await this.write(() => {
      this.sql.insertDescriptor.run({
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
      this.sql.insertVersion.run(kind, id, 1, bodyJson, now);
    });
  }

  async update(
    kind: string,
    id: string,
    expectedVersion: number,
    bodyJson: string,
    now: number,
  ): Promise<UpdateOutcome> {
    return this.write(() => {
      const row = this.sql.bumpVersion.get(now, kind, id, expectedVersion);
      if (row === undefined) return this.#miss(kind, id);
      const version = Number(row.current_version);
      this.sql.insertVersion.run(kind, id, version, bodyJson, now);
      return { status: 'updated', version };
    });
  }

  async read(kind: string, id: string, version: number): Promise<string | undefined> {
    const row = this.sql.read.get(kind, id, version);
    return row === undefined ? undefined : String(row.body);
  }

  async descriptor(kind: string, id: string): Promise<DescriptorRecord | undefined> {
    const row = this.sql.descriptor.get(kind, id);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async descriptorById(id: string): Promise<DescriptorRecord | undefined> {
    const row = this.sql.descriptorById.get(id);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async softDelete(kind: string, id: string, expectedVersion: number, now: number): Promise<DeleteOutcome> {
    const row = this.sql.flagDeleted.get(now, kind, id, expectedVersion);
    return row === undefined ? this.#miss(kind, id) : { status: 'deleted' };
  }

  async purge(kind: string, id: string): Promise<boolean> {
    return this.write(() => {
      this.sql.purgeVersions.run(kind, id);
      return Number(this.sql.purgeDescriptor.run(kind, id).changes) > 0;
    });
  }

  async findByOrigin(kind: string, originId: string): Promise<DescriptorRecord | undefined> {
    const row = this.sql.byOrigin.get(kind, originId);
    return row === undefined ? undefined : toDescriptor(row);
  }

  async listDescriptors(kind: string, query: DescriptorQuery): Promise<DescriptorRecord[]> {
    const rows = this.sql.list.all({
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
    changes: DescriptorChanges,
    now: number,
  ): Promise<DescriptorRecord | undefined> {
    const row = this.sql.edit.get({
      kind,
      id,
      name: changes.name ?? null,
      description: changes.description ?? null,
      now,
    });
    return row === undefined ? undefined : toDescriptor(row);
  }

  async setAccess(kind: string, id: string, access: DescriptorAccessChange): Promise<DescriptorRecord | undefined> {
    const row = this.sql.setAccess.get({
      kind,
      id,
      visibility: access.visibility ?? null,
      spaceId: access.spaceId ?? null,
      grants: access.grants ?? null,
    });
    return row === undefined ? undefined : toDescriptor(row);
  }

  /** Why a conditional write matched nothing: unknown or deleted -> not-found, otherwise stale. */
  #miss(kind: string, id: string): { status: 'not-found' } | { status: 'stale'; currentVersion: number } {
    const row = this.sql.descriptor.get(kind, id);
    if (row === undefined || row.deleted === 1) return { status: 'not-found' };
    return { status: 'stale', currentVersion: Number(row.current_version) };
  }
}
