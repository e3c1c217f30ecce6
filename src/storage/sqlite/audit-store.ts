import type { DatabaseSync } from 'node:sqlite';
import type { AuditRow, AuditStore } from '../audit-ports.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  insert: `INSERT OR IGNORE INTO audit_entries (id, conversation_id, sequence, agent_id, agent_version, created_at, document)
    VALUES (?, ?, ?, ?, ?, ?, ?)`,
  list: 'SELECT document FROM audit_entries WHERE conversation_id = ? ORDER BY sequence, id LIMIT ? OFFSET ?',
  count: 'SELECT count(*) AS n FROM audit_entries WHERE conversation_id = ?',
  latest: 'SELECT document FROM audit_entries WHERE conversation_id = ? ORDER BY sequence DESC, id DESC LIMIT 1',
};

/** The audit ledger's entries in SQLite: insert-only (triggers refuse UPDATE and DELETE, see the migration). */
export class SqliteAuditStore extends SqliteStore<keyof typeof STATEMENTS> implements AuditStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async append(rows: readonly AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.write(() => {
      for (const row of rows) {
        this.sql.insert.run(
          row.id,
          row.conversationId,
          row.sequence,
          row.agentId,
          row.agentVersion,
          row.timestamp,
          row.document,
        );
      }
    });
  }

  async list(conversationId: string, skip: number, limit: number): Promise<string[]> {
    return this.sql.list.all(conversationId, limit, skip).map((row) => String(row.document));
  }

  async count(conversationId: string): Promise<number> {
    return Number(this.sql.count.get(conversationId)?.n ?? 0);
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const row = this.sql.latest.get(conversationId);
    return row === undefined ? undefined : String(row.document);
  }
}
