import type { Queryable } from './transaction.ts';
import {
  CHANNEL_MESSAGE_COLUMNS,
  channelMessageRow,
  toChannelMessageRecord,
  type ChannelMessageOutcome,
  type ChannelMessageRecord,
  type ChannelMessageStore,
} from '../channel-message-ports.ts';

/** Inbound channel messages in PostgreSQL; a claim is one conditional UPDATE, so one instance wins it. */
export class PostgresChannelMessageStore implements ChannelMessageStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async accept(message: ChannelMessageRecord): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `INSERT INTO channel_messages (${CHANNEL_MESSAGE_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (platform, agent_id, message_key) DO NOTHING`,
      channelMessageRow(message),
    );
    return rowCount === 1;
  }

  async claim(id: string, claimId: string, now: number, leaseUntil: number): Promise<ChannelMessageRecord | undefined> {
    const { rows } = await this.#db.query(
      `UPDATE channel_messages SET state = 'PROCESSING', claimed_by = $1, lease_until = $2
       WHERE id = $3 AND (state = 'PENDING' OR (state = 'PROCESSING' AND lease_until < $4))
       RETURNING ${CHANNEL_MESSAGE_COLUMNS}`,
      [claimId, leaseUntil, id, now],
    );
    return rows[0] === undefined ? undefined : toChannelMessageRecord(rows[0]);
  }

  async finish(id: string, claimId: string, outcome: ChannelMessageOutcome): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `UPDATE channel_messages SET state = $1, finished_on = $2, conversation_id = $3, detail = $4, lease_until = NULL
       WHERE id = $5 AND claimed_by = $6`,
      [outcome.state, outcome.finishedOn, outcome.conversationId ?? null, outcome.detail ?? null, id, claimId],
    );
    return rowCount === 1;
  }

  async stranded(now: number, pendingBefore: number, limit: number): Promise<string[]> {
    const { rows } = await this.#db.query(
      `SELECT id FROM channel_messages
       WHERE (state = 'PENDING' AND received_on < $1) OR (state = 'PROCESSING' AND lease_until < $2)
       ORDER BY received_on LIMIT $3`,
      [pendingBefore, now, limit],
    );
    return rows.map((row) => String(row.id));
  }

  async list(agentId: string, limit: number): Promise<ChannelMessageRecord[]> {
    const { rows } = await this.#db.query(
      `SELECT ${CHANNEL_MESSAGE_COLUMNS} FROM channel_messages WHERE agent_id = $1
       ORDER BY received_on DESC, id DESC LIMIT $2`,
      [agentId, limit],
    );
    return rows.map(toChannelMessageRecord);
  }

  async conversationOf(platform: string, agentId: string, senderKey: string): Promise<string | undefined> {
    const { rows } = await this.#db.query(
      'SELECT conversation_id FROM channel_conversations WHERE platform = $1 AND agent_id = $2 AND sender_key = $3',
      [platform, agentId, senderKey],
    );
    return rows[0] === undefined ? undefined : String(rows[0].conversation_id);
  }

  async setConversation(platform: string, agentId: string, senderKey: string, conversationId: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO channel_conversations (platform, agent_id, sender_key, conversation_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (platform, agent_id, sender_key) DO UPDATE SET conversation_id = excluded.conversation_id`,
      [platform, agentId, senderKey, conversationId],
    );
  }
}
