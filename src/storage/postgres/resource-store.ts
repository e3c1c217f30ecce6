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
import type { Queryable } from './transaction.ts';

/** Versioned configuration resources and their descriptors in PostgreSQL. Every method is a single statement, hence atomic. */
export class PostgresResourceStore implements ConfigResourceStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async create(resource: NewResource): Promise<void> {
    const { kind, id, bodyJson, now, name, description, origin } = resource;
    await this.#db.query(
      `WITH d AS (
         INSERT INTO descriptors
           (kind, id, current_version, name, description, created_on, last_modified_on, origin_id, owner_id, space_id, visibility)
         VALUES ($1, $2, 1, $3, $4, $5, $5, $6, $7, $8, $9))
       INSERT INTO resource_versions (kind, id, version, body, created_on) VALUES ($1, $2, 1, $10, $5)`,
      [
        kind,
        id,
        name,
        description,
        now,
        origin.originId ?? null,
        origin.ownerId ?? null,
        origin.spaceId ?? null,
        origin.visibility ?? null,
        bodyJson,
      ],
    );
  }

  async update(
    kind: string,
    id: string,
    expectedVersion: number,
    bodyJson: string,
    now: number,
  ): Promise<UpdateOutcome> {
    // Concurrent updates of one row queue on its row lock; the loser re-checks `current_version` and matches nothing.
    const { rows } = await this.#db.query(
      `WITH d AS (
         UPDATE descriptors SET current_version = current_version + 1, last_modified_on = $4
         WHERE kind = $1 AND id = $2 AND current_version = $3 AND NOT deleted
         RETURNING kind, id, current_version)
       INSERT INTO resource_versions (kind, id, version, body, created_on)
       SELECT kind, id, current_version, $5, $4 FROM d
       RETURNING version`,
      [kind, id, expectedVersion, now, bodyJson],
    );
    return rows.length === 1 ? { status: 'updated', version: Number(rows[0].version) } : this.#miss(kind, id);
  }

  async read(kind: string, id: string, version: number): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      `SELECT v.body FROM resource_versions v
       JOIN descriptors d ON d.kind = v.kind AND d.id = v.id
       WHERE v.kind = $1 AND v.id = $2 AND v.version = $3 AND NOT (d.deleted AND d.current_version = v.version)`,
      [kind, id, version],
    );
    return rows[0]?.body;
  }

  async descriptor(kind: string, id: string): Promise<DescriptorRecord | undefined> {
    const { rows } = await this.#db.query('SELECT * FROM descriptors WHERE kind = $1 AND id = $2', [kind, id]);
    return rows[0] === undefined ? undefined : toDescriptor(rows[0]);
  }

  async descriptorById(id: string): Promise<DescriptorRecord | undefined> {
    const { rows } = await this.#db.query('SELECT * FROM descriptors WHERE id = $1 LIMIT 1', [id]);
    return rows[0] === undefined ? undefined : toDescriptor(rows[0]);
  }

  async softDelete(kind: string, id: string, expectedVersion: number, now: number): Promise<DeleteOutcome> {
    const { rowCount } = await this.#db.query(
      `UPDATE descriptors SET deleted = true, last_modified_on = $4
       WHERE kind = $1 AND id = $2 AND current_version = $3 AND NOT deleted`,
      [kind, id, expectedVersion, now],
    );
    return rowCount === 1 ? { status: 'deleted' } : this.#miss(kind, id);
  }

  async purge(kind: string, id: string): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `WITH v AS (DELETE FROM resource_versions WHERE kind = $1 AND id = $2)
       DELETE FROM descriptors WHERE kind = $1 AND id = $2`,
      [kind, id],
    );
    return rowCount === 1;
  }

  async findByOrigin(kind: string, originId: string): Promise<DescriptorRecord | undefined> {
    const { rows } = await this.#db.query(
      `SELECT * FROM descriptors WHERE kind = $1 AND origin_id = $2 AND NOT deleted
       ORDER BY last_modified_on DESC, id DESC LIMIT 1`,
      [kind, originId],
    );
    return rows[0] === undefined ? undefined : toDescriptor(rows[0]);
  }

  async listDescriptors(kind: string, query: DescriptorQuery): Promise<DescriptorRecord[]> {
    const { rows } = await this.#db.query(
      `SELECT * FROM descriptors
       WHERE kind = $1 AND NOT deleted
         AND ($2::text IS NULL OR space_id = $2)
         AND ($3 = '' OR strpos(lower(name), lower($3)) > 0 OR strpos(lower(description), lower($3)) > 0
              OR strpos(lower(id), lower($3)) > 0)
       ORDER BY last_modified_on DESC, id DESC
       LIMIT $4 OFFSET $5`,
      [kind, query.spaceId ?? null, query.filter, query.limit, query.index * query.limit],
    );
    return rows.map(toDescriptor);
  }

  async editDescriptor(
    kind: string,
    id: string,
    changes: DescriptorChanges,
    now: number,
  ): Promise<DescriptorRecord | undefined> {
    const { rows } = await this.#db.query(
      `UPDATE descriptors
       SET name = coalesce($3, name), description = coalesce($4, description), last_modified_on = $5
       WHERE kind = $1 AND id = $2 AND NOT deleted RETURNING *`,
      [kind, id, changes.name ?? null, changes.description ?? null, now],
    );
    return rows[0] === undefined ? undefined : toDescriptor(rows[0]);
  }

  async setAccess(kind: string, id: string, access: DescriptorAccessChange): Promise<DescriptorRecord | undefined> {
    const { rows } = await this.#db.query(
      `UPDATE descriptors
       SET visibility = coalesce($3, visibility), space_id = coalesce($4, space_id), grants = coalesce($5, grants)
       WHERE kind = $1 AND id = $2 AND NOT deleted RETURNING *`,
      [kind, id, access.visibility ?? null, access.spaceId ?? null, access.grants ?? null],
    );
    return rows[0] === undefined ? undefined : toDescriptor(rows[0]);
  }

  /** Why a conditional write matched nothing: unknown or deleted -> not-found, otherwise stale. */
  async #miss(
    kind: string,
    id: string,
  ): Promise<{ status: 'not-found' } | { status: 'stale'; currentVersion: number }> {
    const { rows } = await this.#db.query(
      'SELECT current_version, deleted FROM descriptors WHERE kind = $1 AND id = $2',
      [kind, id],
    );
    const row = rows[0];
    if (row === undefined || row.deleted) return { status: 'not-found' };
    return { status: 'stale', currentVersion: Number(row.current_version) };
  }
}
