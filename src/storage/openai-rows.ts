import type { ApiKeyRecord } from './openai-ports.ts';

/** A stored API key row (either adapter) as a record. */
export function toApiKeyRecord(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    keyHash: String(row.key_hash),
    agents: JSON.parse(String(row.agents)) as string[],
    createdOn: Number(row.created_on),
    createdBy: String(row.created_by),
    revokedOn: row.revoked_on === null || row.revoked_on === undefined ? undefined : Number(row.revoked_on),
  };
}
