import type { DatabaseSync } from 'node:sqlite';
import {
  CHANNEL_MESSAGE_COLUMNS,
  channelMessageRow,
  toChannelMessageRecord,
  type ChannelMessageOutcome,
  type ChannelMessageRecord,
  type ChannelMessageStore,
} from '../channel-message-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  accept: `INSERT INTO channel_messages (${CHANNEL_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (platform, agent_id, message_key) DO NOTHING`,
  claim: `UPDATE channel_messages SET state = 'PROCESSING', claimed_by = ?, lease_until = ?
    WHERE id = ? AND (state = 'PENDING' OR (state = 'PROCESSING' AND lease_until < ?))
    RETURNING ${CHANNEL_MESSAGE_COLUMNS}`,
  finish: `UPDATE channel_messages SET state = ?, finished_on = ?, conversation_id = ?, detail = ?, lease_until = NULL
    WHERE id = ? AND claimed_by = ?`,
  stranded: `SELECT id FROM channel_messages
    WHERE (state = 'PENDING' AND received_on < ?) OR (state = 'PROCESSING' AND lease_until < ?)
    ORDER BY received_on LIMIT ?`,
  list: `SELECT ${CHANNEL_MESSAGE_COLUMNS} FROM channel_messages WHERE agent_id = ?
    ORDER BY received_on DESC, id DESC LIMIT ?`,
  conversationOf:
    'SELECT conversation_id FROM channel_conversations WHERE platform = ? AND agent_id = ? AND sender_key = ?',
  setConversation: `INSERT INTO channel_conversations (platform, agent_id, sender_key, conversation_id) VALUES (?, ?, ?, ?)
    ON CONFLICT (platform, agent_id, sender_key) DO UPDATE SET conversation_id = excluded.conversation_id`,
};

/** Inbound channel messages in SQLite. */
export class SqliteChannelMessageStore extends SqliteStore<keyof typeof STATEMENTS> implements ChannelMessageStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  accept(message: ChannelMessageRecord): Promise<boolean> {
    return this.write(() => Number(this.sql.accept.run(...channelMessageRow(message)).changes) === 1);
  }

  claim(id: string, claimId: string, now: number, leaseUntil: number): Promise<ChannelMessageRecord | undefined> {
    return this.write(() => {
      const row = this.sql.claim.get(claimId, leaseUntil, id, now);
      return row === undefined ? undefined : toChannelMessageRecord(row);
    });
  }

  finish(id: string, claimId: string, outcome: ChannelMessageOutcome): Promise<boolean> {
    return this.write(
      () =>
        Number(
          this.sql.finish.run(
            outcome.state,
            outcome.finishedOn,
            outcome.conversationId ?? null,
            outcome.detail ?? null,
            id,
            claimId,
          ).changes,
        ) === 1,
    );
  }

  async stranded(now: number, pendingBefore: number, limit: number): Promise<string[]> {
    return this.sql.stranded.all(pendingBefore, now, limit).map((row) => String(row.id));
  }

  async list(agentId: string, limit: number): Promise<ChannelMessageRecord[]> {
    return this.sql.list.all(agentId, limit).map(toChannelMessageRecord);
  }

  async conversationOf(platform: string, agentId: string, senderKey: string): Promise<string | undefined> {
    const row = this.sql.conversationOf.get(platform, agentId, senderKey);
    return row === undefined ? undefined : String(row.conversation_id);
  }

  async setConversation(platform: string, agentId: string, senderKey: string, conversationId: string): Promise<void> {
    await this.write(() => this.sql.setConversation.run(platform, agentId, senderKey, conversationId));
  }
}
