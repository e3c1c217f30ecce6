import type { DescriptorRecord } from './ports.ts';

/**
 * Maps a `descriptors` row (either adapter) to a record. PostgreSQL returns `bigint` columns as strings and
 * SQLite returns booleans as 0/1, hence the conversions. Every key is always present so records share one shape.
 */
export function toDescriptor(row: Record<string, unknown>): DescriptorRecord {
  return {
    kind: String(row.kind),
    id: String(row.id),
    currentVersion: Number(row.current_version),
    name: String(row.name),
    description: String(row.description),
    grants: optionalText(row.grants),
    createdOn: Number(row.created_on),
    lastModifiedOn: Number(row.last_modified_on),
    deleted: row.deleted === true || row.deleted === 1,
    originId: optionalText(row.origin_id),
    ownerId: optionalText(row.owner_id),
    spaceId: optionalText(row.space_id),
    visibility: optionalText(row.visibility),
  };
}

function optionalText(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}
