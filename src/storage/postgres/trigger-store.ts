import type { Queryable } from './transaction.ts';
import type { TriggerStore } from '../runtime-ports.ts';

/** Managed-agent triggers and the conversation kept per (intent, user), in PostgreSQL; one statement each. */
export class PostgresTriggerStore implements TriggerStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async get(intent: string): Promise<string | undefined> {
    const { rows } = await this.#db.query('SELECT body FROM triggers WHERE intent = $1', [intent]);
    return rows[0]?.body;
  }

  async put(intent: string, bodyJson: string, now: number): Promise<boolean> {
    // `xmax = 0` on the returned row: it was inserted, not updated.
    const { rows } = await this.#db.query(
      `INSERT INTO triggers (intent, body, created_on, last_modified_on) VALUES ($1, $2, $3, $3)
       ON CONFLICT (intent) DO UPDATE SET body = excluded.body, last_modified_on = excluded.last_modified_on
       RETURNING (xmax = 0) AS created`,
      [intent, bodyJson, now],
    );
    return rows[0].created === true;
  }

  async delete(intent: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM triggers WHERE intent = $1', [intent]);
    return rowCount === 1;
  }

  async list(): Promise<Array<{ intent: string; bodyJson: string }>> {
    const { rows } = await this.#db.query('SELECT intent, body FROM triggers ORDER BY intent');
    return rows.map((row) => ({ intent: row.intent as string, bodyJson: row.body as string }));
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
