import type { Migration } from '../migration.ts';

/** The SQLite schema (see `Migration`). */
export const sqliteMigrations: readonly Migration[] = [
  {
    name: 'config resources: versions and descriptors',
    sql: `
      CREATE TABLE resource_versions (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        PRIMARY KEY (kind, id, version)
      ) WITHOUT ROWID;
      CREATE TABLE descriptors (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        current_version INTEGER NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        created_on INTEGER NOT NULL,
        last_modified_on INTEGER NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0,
        origin_id TEXT,
        owner_id TEXT,
        space_id TEXT,
        visibility TEXT,
        grants TEXT,
        PRIMARY KEY (kind, id)
      );
      CREATE INDEX descriptors_by_id ON descriptors (id);
      CREATE INDEX descriptors_listing ON descriptors (kind, deleted, last_modified_on DESC, id DESC);
    `,
  },
  {
    name: 'runtime: conversations, steps, user properties, deployments, triggers',
    sql: `
      CREATE TABLE conversations (
        id TEXT NOT NULL PRIMARY KEY,
        agent_id TEXT NOT NULL,
        agent_version INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        state TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        last_modified_on INTEGER NOT NULL,
        step_count INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        state_json TEXT NOT NULL
      );
      CREATE INDEX conversations_recent ON conversations (last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_agent ON conversations (agent_id, agent_version, last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_user ON conversations (user_id, last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_state ON conversations (state, environment, last_modified_on DESC, id DESC);
      CREATE TABLE conversation_steps (
        conversation_id TEXT NOT NULL,
        step_index INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (conversation_id, step_index)
      ) WITHOUT ROWID;
      CREATE TABLE user_properties (
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_on INTEGER NOT NULL,
        PRIMARY KEY (user_id, name)
      ) WITHOUT ROWID;
      CREATE INDEX user_properties_by_age ON user_properties (updated_on);
      CREATE TABLE deployments (
        environment TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        agent_version INTEGER NOT NULL,
        deployed_on INTEGER NOT NULL,
        PRIMARY KEY (environment, agent_id, agent_version)
      ) WITHOUT ROWID;
      CREATE TABLE triggers (
        intent TEXT NOT NULL PRIMARY KEY,
        body TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        last_modified_on INTEGER NOT NULL
      );
      CREATE TABLE managed_conversations (
        intent TEXT NOT NULL,
        user_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        PRIMARY KEY (intent, user_id)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'secrets vault: key check value, wrapped tenant data keys, sealed secrets',
    sql: `
      CREATE TABLE vault_meta (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL
      );
      CREATE TABLE vault_data_keys (
        tenant TEXT NOT NULL PRIMARY KEY,
        ciphertext TEXT NOT NULL,
        iv TEXT NOT NULL,
        tag TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE vault_secrets (
        tenant TEXT NOT NULL,
        name TEXT NOT NULL,
        ciphertext TEXT NOT NULL,
        iv TEXT NOT NULL,
        tag TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_modified_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, name)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'audit ledger: write-once entries',
    sql: `
      CREATE TABLE audit_entries (
        id TEXT NOT NULL PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        agent_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        document TEXT NOT NULL
      );
      CREATE INDEX audit_entries_by_conversation ON audit_entries (conversation_id, sequence, id);
      CREATE INDEX audit_entries_by_agent ON audit_entries (agent_id, agent_version, created_at);
      CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: UPDATE refused'); END;
      CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: DELETE refused'); END;
    `,
  },
  {
    name: 'LLM tool rate limits shared by every instance',
    sql: `
      CREATE TABLE tool_rate_limits (
        tool TEXT NOT NULL PRIMARY KEY,
        rate_limit INTEGER NOT NULL,
        tokens REAL NOT NULL,
        updated_on INTEGER NOT NULL
      );
    `,
  },
  {
    name: 'triggers get owners, spaces, visibility and grants like configuration resources',
    sql: `
      ALTER TABLE triggers ADD COLUMN owner_id TEXT;
      ALTER TABLE triggers ADD COLUMN space_id TEXT;
      ALTER TABLE triggers ADD COLUMN visibility TEXT;
      ALTER TABLE triggers ADD COLUMN grants TEXT;
    `,
  },
  {
    name: 'transcript and suite runs',
    sql: `
      CREATE TABLE transcript_runs (
        id TEXT NOT NULL PRIMARY KEY,
        subject_id TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        body TEXT NOT NULL
      );
      CREATE INDEX transcript_runs_by_subject ON transcript_runs (subject_id, created_on DESC, id DESC);
    `,
  },
  {
    // A step (about 1-3 KB) in a WITHOUT ROWID table filled a leaf page of its own and rebalanced its neighbours on
    // insert; in a rowid table the steps of all conversations append to the same last pages, so the turns that
    // share one group commit write a few pages between them, and the position index holds only the small keys.
    name: 'conversation steps appended to a rowid table, found through a position index',
    sql: `
      CREATE TABLE conversation_steps_appended (
        conversation_id TEXT NOT NULL,
        step_index INTEGER NOT NULL,
        body TEXT NOT NULL
      );
      INSERT INTO conversation_steps_appended (conversation_id, step_index, body)
        SELECT conversation_id, step_index, body FROM conversation_steps ORDER BY conversation_id, step_index;
      DROP TABLE conversation_steps;
      ALTER TABLE conversation_steps_appended RENAME TO conversation_steps;
      CREATE UNIQUE INDEX conversation_steps_position ON conversation_steps (conversation_id, step_index);
    `,
  },
  {
    name: 'OpenAI-compatible API: API keys (hashed) and chats found again by their history',
    sql: `
      CREATE TABLE api_keys (
        id TEXT NOT NULL PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        agents TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        revoked_on INTEGER
      );
      CREATE TABLE chat_threads (
        history_hash TEXT NOT NULL PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        created_on INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'schedule runs, one per schedule and due time',
    sql: `
      CREATE TABLE schedule_runs (
        id TEXT NOT NULL PRIMARY KEY,
        schedule_id TEXT NOT NULL,
        due_on INTEGER NOT NULL,
        started_on INTEGER NOT NULL,
        finished_on INTEGER,
        outcome TEXT NOT NULL,
        conversation_id TEXT,
        detail TEXT,
        UNIQUE (schedule_id, due_on)
      );
    `,
  },
  {
    name: 'inbound channel messages (persisted before the platform is answered) and the conversation of each sender',
    sql: `
      CREATE TABLE channel_messages (
        id TEXT NOT NULL PRIMARY KEY,
        platform TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        message_key TEXT NOT NULL,
        sender_key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        reply_to TEXT NOT NULL,
        input TEXT NOT NULL,
        received_on INTEGER NOT NULL,
        state TEXT NOT NULL,
        claimed_by TEXT,
        lease_until INTEGER,
        finished_on INTEGER,
        conversation_id TEXT,
        detail TEXT,
        UNIQUE (platform, agent_id, message_key)
      );
      CREATE INDEX channel_messages_by_agent ON channel_messages (agent_id, received_on DESC);
      CREATE INDEX channel_messages_open ON channel_messages (state, received_on) WHERE state IN ('PENDING', 'PROCESSING');
      CREATE TABLE channel_conversations (
        platform TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        sender_key TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        PRIMARY KEY (platform, agent_id, sender_key)
      );
    `,
  },
  {
    name: 'group discussions',
    sql: `
      CREATE TABLE group_discussions (
        id TEXT NOT NULL PRIMARY KEY,
        group_id TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        last_modified_on INTEGER NOT NULL,
        state TEXT NOT NULL,
        lease_until INTEGER,
        body TEXT NOT NULL
      );
      CREATE INDEX group_discussions_by_group ON group_discussions (group_id, created_on DESC, id DESC);
    `,
  },
  {
    // One row per block of consecutive entries (a turn's, one per task) instead of one per entry: a turn writes
    // one row and two index entries instead of four rows and twelve (see SqliteAuditStore).
    name: 'audit ledger: entries kept in blocks, one row per turn',
    sql: `
      CREATE TABLE audit_blocks (
        first_id TEXT NOT NULL UNIQUE,
        conversation_id TEXT NOT NULL,
        first_sequence INTEGER NOT NULL,
        entry_count INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        agent_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        documents TEXT NOT NULL
      );
      CREATE INDEX audit_blocks_by_conversation ON audit_blocks (conversation_id, first_sequence, first_id);
      INSERT INTO audit_blocks
        (first_id, conversation_id, first_sequence, entry_count, agent_id, agent_version, created_at, documents)
        SELECT id, conversation_id, sequence, 1, agent_id, agent_version, created_at, '[' || document || ']'
        FROM audit_entries ORDER BY conversation_id, sequence, id;
      DROP TABLE audit_entries;
      CREATE TRIGGER audit_blocks_no_update BEFORE UPDATE ON audit_blocks
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: UPDATE refused'); END;
      CREATE TRIGGER audit_blocks_no_delete BEFORE DELETE ON audit_blocks
        BEGIN SELECT RAISE(ABORT, 'audit entries are write-once: DELETE refused'); END;
    `,
  },
  {
    name: 'knowledge bases: documents, chunks with their vectors, ingestions, revisions',
    sql: `
      CREATE TABLE rag_documents (
        kb_id TEXT NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        chunk_count INTEGER NOT NULL,
        ingestion_id TEXT NOT NULL,
        created_on INTEGER NOT NULL,
        updated_on INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        PRIMARY KEY (kb_id, id)
      ) WITHOUT ROWID;
      CREATE TABLE rag_chunks (
        kb_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB NOT NULL,
        PRIMARY KEY (kb_id, document_id, chunk_index)
      );
      CREATE TABLE rag_ingestions (
        id TEXT NOT NULL PRIMARY KEY,
        kb_id TEXT NOT NULL,
        body TEXT NOT NULL
      );
      CREATE INDEX rag_ingestions_by_kb ON rag_ingestions (kb_id);
      CREATE TABLE rag_revisions (
        kb_id TEXT NOT NULL PRIMARY KEY,
        revision INTEGER NOT NULL
      );
    `,
  },
  {
    name: 'persistent user memory: entries per user, unique by key and owning agent (none for global entries)',
    sql: `
      CREATE TABLE user_memories (
        id TEXT NOT NULL PRIMARY KEY,
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        owner TEXT NOT NULL,
        value TEXT NOT NULL,
        category TEXT NOT NULL,
        visibility TEXT NOT NULL,
        source_agent_id TEXT,
        group_ids TEXT NOT NULL,
        source_conversation_id TEXT,
        access_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (user_id, key, owner)
      );
      CREATE INDEX user_memories_by_update ON user_memories (updated_at);
    `,
  },
  {
    // The position index took one leaf page per turn: each conversation's newest entries sit in a leaf of their own,
    // so the turns sharing a group commit each wrote one more page (a fifth of a turn's WAL). Each step now names
    // the step before it and the header names the latest one: the header row is written by every turn anyway. The
    // table is made again (same rowids) so that the link comes before the body: reading it then never reads the
    // overflow pages of a long step.
    name: 'conversation steps chained from the header instead of a position index',
    sql: `
      ALTER TABLE conversations ADD COLUMN last_step INTEGER;
      UPDATE conversations SET last_step = (
        SELECT step.rowid FROM conversation_steps AS step WHERE step.conversation_id = conversations.id
        ORDER BY step.step_index DESC LIMIT 1);
      CREATE TABLE conversation_steps_chained (
        conversation_id TEXT NOT NULL,
        step_index INTEGER NOT NULL,
        previous_step INTEGER,
        body TEXT NOT NULL
      );
      INSERT INTO conversation_steps_chained (rowid, conversation_id, step_index, previous_step, body)
        SELECT step.rowid, step.conversation_id, step.step_index, (
            SELECT before.rowid FROM conversation_steps AS before
            WHERE before.conversation_id = step.conversation_id AND before.step_index = step.step_index - 1),
          step.body
        FROM conversation_steps AS step ORDER BY step.rowid;
      DROP TABLE conversation_steps;
      ALTER TABLE conversation_steps_chained RENAME TO conversation_steps;
    `,
  },
];
