import type { Queryable } from './transaction.ts';
import type { DescriptorAccessChange, DescriptorOrigin } from '../ports.ts';
import type { TriggerRecord, TriggerStore } from '../runtime-ports.ts';
import { toTriggerRecord } from '../runtime-rows.ts';

const COLUMNS = 'intent, body, owner_id, space_id, visibility, grants';

/** Managed-agent triggers and the conversation kept per (intent, user), in PostgreSQL; one statement each. */
export class PostgresTriggerStore implements TriggerStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async get(intent: string): Promise<TriggerRecord | undefined> {
    const { rows } = await this.#db.query(`SELECT ${COLUMNS} FROM triggers WHERE intent = $1`, [intent]);
    return rows[0] === undefined ? undefined : toTriggerRecord(rows[0]);
  }

  async put(intent: string, bodyJson: string, now: number, origin: DescriptorOrigin = {}): Promise<boolean> {
    // `xmax = 0` on the returned row: it was inserted, not updated (an update keeps owner, space and visibility).
    const { rows } = await this.#db.query(
      `INSERT INTO triggers (intent, body, created_on, last_modified_on, owner_id, space_id, visibility)
       VALUES ($1, $2, $3, $3, $4, $5, $6)
       ON CONFLICT (intent) DO UPDATE SET body = excluded.body, last_modified_on = excluded.last_modified_on
       RETURNING (xmax = 0) AS created`,
      [intent, bodyJson, now, origin.ownerId ?? null, origin.spaceId ?? null, origin.visibility ?? null],
    );
    return rows[0].created === true;
  }

  async setAccess(intent: string, change: DescriptorAccessChange): Promise<TriggerRecord | undefined> {
    const { rows } = await this.#db.query(
      `UPDATE triggers SET visibility = coalesce($1, visibility), space_id = coalesce($2, space_id),
       grants = coalesce($3, grants) WHERE intent = $4 RETURNING ${COLUMNS}`,
      [change.visibility ?? null, change.spaceId ?? null, change.grants ?? null, intent],
    );
    return rows[0] === undefined ? undefined : toTriggerRecord(rows[0]);
  }

  async delete(intent: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM triggers WHERE intent = $1', [intent]);
    return rowCount === 1;
  }

  async list(): Promise<TriggerRecord[]> {
    const { rows } = await this.#db.query(`SELECT ${COLUMNS} FROM triggers ORDER BY intent`);
    return rows.map(toTriggerRecord);
  }

  async managedConversation(intent: string, userId: string): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      'SELECT conversation_id FROM managed_conversations WHERE intent = $1 AND user_id = $2',
      [intent, userId],
    );
    return rows[0]?.conversation_id;
  }

  async setManagedConversation(intent: string, userId: string, conversationId: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO managed_conversations (intent, user_id, conversation_id) VALUES ($1, $2, $3)
       ON CONFLICT (intent, user_id) DO UPDATE SET conversation_id = excluded.conversation_id`,
      [intent, userId, conversationId],
    );
  }

  async clearManagedConversation(intent: string, userId: string, conversationId: string): Promise<void> {
    await this.#db.query(
      'DELETE FROM managed_conversations WHERE intent = $1 AND user_id = $2 AND conversation_id = $3',
      [intent, userId, conversationId],
    );
  }
}
