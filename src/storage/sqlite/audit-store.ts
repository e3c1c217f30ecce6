import type { DatabaseSync } from 'node:sqlite';
import type { AuditRow, AuditStore } from '../audit-ports.ts';
import { transaction } from './transaction.ts';

/** The audit ledger's entries in SQLite: insert-only (triggers refuse UPDATE and DELETE, see the migration). */
export class SqliteAuditStore implements AuditStore {
  readonly #db: DatabaseSync;
  readonly #sql;

  constructor(db: DatabaseSync) {
    this.#db = db;
    const prepare = (sql: string) => db.prepare(sql);
    this.#sql = {
      insert: prepare(`INSERT OR IGNORE INTO audit_entries (id, conversation_id, sequence, agent_id, agent_version, created_at, document)
        VALUES (?, ?, ?, ?, ?, ?, ?)`),
      list: prepare(`SELECT document FROM audit_entries WHERE conversation_id = ?
        ORDER BY sequence, id LIMIT ? OFFSET ?`),
      count: prepare('SELECT count(*) AS n FROM audit_entries WHERE conversation_id = ?'),
      latest: prepare(`SELECT document FROM audit_entries WHERE conversation_id = ?
        ORDER BY sequence DESC, id DESC LIMIT 1`),
    };
  }

  async append(rows: readonly AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    transaction(this.#db, () => {
      for (const row of rows) {
        this.#sql.insert.run(row.id, row.conversationId, row.sequence, row.agentId, row.agentVersion, row.timestamp, row.document);
      }
    });
  }

  async list(conversationId: string, skip: number, limit: number): Promise<string[]> {
    return this.#sql.list.all(conversationId, limit, skip).map((row) => String(row.document));
  }

  async count(conversationId: string): Promise<number> {
    return Number(this.#sql.count.get(conversationId)?.n ?? 0);
  }

  async latest(conversationId: string): Promise<string | undefined> {
    const row = this.#sql.latest.get(conversationId);
    return row === undefined ? undefined : String(row.document);
  }
}
