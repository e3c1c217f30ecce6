import type { Migration } from '../migration.ts';

/**
 * The PostgreSQL schema (see `Migration`).
 * Bodies are `text`, not `jsonb`, so they read back byte-identical (key order, spacing, unicode).
 */
export const postgresMigrations: readonly Migration[] = [
  {
    name: 'config resources: versions and descriptors',
    sql: `
      CREATE TABLE resource_versions (
        kind text NOT NULL,
        id text NOT NULL,
        version integer NOT NULL,
        body text NOT NULL,
        created_on bigint NOT NULL,
        PRIMARY KEY (kind, id, version)
      );
      CREATE TABLE descriptors (
        kind text NOT NULL,
        id text NOT NULL,
        current_version integer NOT NULL,
        name text NOT NULL DEFAULT '',
        description text NOT NULL DEFAULT '',
        created_on bigint NOT NULL,
        last_modified_on bigint NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        origin_id text,
        owner_id text,
        space_id text,
        visibility text,
        grants text,
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
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        agent_version integer NOT NULL,
        user_id text NOT NULL,
        environment text NOT NULL,
        state text NOT NULL,
        created_on bigint NOT NULL,
        last_modified_on bigint NOT NULL,
        step_count integer NOT NULL,
        revision bigint NOT NULL,
        state_json text NOT NULL
      );
      CREATE INDEX conversations_recent ON conversations (last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_agent ON conversations (agent_id, agent_version, last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_user ON conversations (user_id, last_modified_on DESC, id DESC);
      CREATE INDEX conversations_by_state ON conversations (state, environment, last_modified_on DESC, id DESC);
      CREATE TABLE conversation_steps (
        conversation_id text NOT NULL,
        step_index integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (conversation_id, step_index)
      );
      CREATE TABLE user_properties (
        user_id text NOT NULL,
        name text NOT NULL,
        value text NOT NULL,
        updated_on bigint NOT NULL,
        PRIMARY KEY (user_id, name)
      );
      CREATE INDEX user_properties_by_age ON user_properties (updated_on);
      CREATE TABLE deployments (
        environment text NOT NULL,
        agent_id text NOT NULL,
        agent_version integer NOT NULL,
        deployed_on bigint NOT NULL,
        PRIMARY KEY (environment, agent_id, agent_version)
      );
      CREATE TABLE triggers (
        intent text PRIMARY KEY,
        body text NOT NULL,
        created_on bigint NOT NULL,
        last_modified_on bigint NOT NULL
      );
      CREATE TABLE managed_conversations (
        intent text NOT NULL,
        user_id text NOT NULL,
        conversation_id text NOT NULL,
        PRIMARY KEY (intent, user_id)
      );
    `,
  },
  {
    name: 'secrets vault: key check value, wrapped tenant data keys, sealed secrets',
    sql: `
      CREATE TABLE vault_meta (
        key text NOT NULL PRIMARY KEY,
        value text NOT NULL
      );
      CREATE TABLE vault_data_keys (
        tenant text NOT NULL PRIMARY KEY,
        ciphertext text NOT NULL,
        iv text NOT NULL,
        tag text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE vault_secrets (
        tenant text NOT NULL,
        name text NOT NULL,
        ciphertext text NOT NULL,
        iv text NOT NULL,
        tag text NOT NULL,
        description text NOT NULL,
        created_at bigint NOT NULL,
        last_modified_at bigint NOT NULL,
        PRIMARY KEY (tenant, name)
      );
    `,
  },
  {
    name: 'audit ledger: write-once entries',
    sql: `
      CREATE TABLE audit_entries (
        id text NOT NULL PRIMARY KEY,
        conversation_id text NOT NULL,
        sequence bigint NOT NULL,
        agent_id text NOT NULL,
        agent_version integer NOT NULL,
        created_at text NOT NULL,
        document text NOT NULL
      );
      CREATE INDEX audit_entries_by_conversation ON audit_entries (conversation_id, sequence, id);
      CREATE INDEX audit_entries_by_agent ON audit_entries (agent_id, agent_version, created_at);
      CREATE FUNCTION audit_entries_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'audit entries are write-once: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
        END
      $$;
      CREATE TRIGGER audit_entries_write_once BEFORE UPDATE OR DELETE ON audit_entries
        FOR EACH ROW EXECUTE FUNCTION audit_entries_refuse_change();
      CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
        FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_refuse_change();
    `,
  },
  {
    name: 'LLM tool rate limits shared by every instance',
    sql: `
      CREATE TABLE tool_rate_limits (
        tool text NOT NULL PRIMARY KEY,
        rate_limit integer NOT NULL,
        tokens double precision NOT NULL,
        updated_on bigint NOT NULL
      );
    `,
  },
  {
    name: 'triggers get owners, spaces, visibility and grants like configuration resources',
    sql: `
      ALTER TABLE triggers ADD COLUMN owner_id text;
      ALTER TABLE triggers ADD COLUMN space_id text;
      ALTER TABLE triggers ADD COLUMN visibility text;
      ALTER TABLE triggers ADD COLUMN grants text;
    `,
  },
  {
    name: 'transcript and suite runs',
    sql: `
      CREATE TABLE transcript_runs (
        id text NOT NULL PRIMARY KEY,
        subject_id text NOT NULL,
        created_on bigint NOT NULL,
        passed boolean NOT NULL,
        body text NOT NULL
      );
      CREATE INDEX transcript_runs_by_subject ON transcript_runs (subject_id, created_on DESC, id DESC);
    `,
  },
  {
    name: 'OpenAI-compatible API: API keys (hashed) and chats found again by their history',
    sql: `
      CREATE TABLE api_keys (
        id text NOT NULL PRIMARY KEY,
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        agents text NOT NULL,
        created_on bigint NOT NULL,
        created_by text NOT NULL,
        revoked_on bigint
      );
      CREATE TABLE chat_threads (
        history_hash text NOT NULL PRIMARY KEY,
        conversation_id text NOT NULL,
        created_on bigint NOT NULL
      );
    `,
  },
  {
    name: 'schedule runs, one per schedule and due time',
    sql: `
      CREATE TABLE schedule_runs (
        id text NOT NULL PRIMARY KEY,
        schedule_id text NOT NULL,
        due_on bigint NOT NULL,
        started_on bigint NOT NULL,
        finished_on bigint,
        outcome text NOT NULL,
        conversation_id text,
        detail text,
        UNIQUE (schedule_id, due_on)
      );
    `,
  },
  {
    name: 'inbound channel messages (persisted before the platform is answered) and the conversation of each sender',
    sql: `
      CREATE TABLE channel_messages (
        id text NOT NULL PRIMARY KEY,
        platform text NOT NULL,
        agent_id text NOT NULL,
        message_key text NOT NULL,
        sender_key text NOT NULL,
        user_id text NOT NULL,
        reply_to text NOT NULL,
        input text NOT NULL,
        received_on bigint NOT NULL,
        state text NOT NULL,
        claimed_by text,
        lease_until bigint,
        finished_on bigint,
        conversation_id text,
        detail text,
        UNIQUE (platform, agent_id, message_key)
      );
      CREATE INDEX channel_messages_by_agent ON channel_messages (agent_id, received_on DESC);
      CREATE INDEX channel_messages_open ON channel_messages (state, received_on) WHERE state IN ('PENDING', 'PROCESSING');
      CREATE TABLE channel_conversations (
        platform text NOT NULL,
        agent_id text NOT NULL,
        sender_key text NOT NULL,
        conversation_id text NOT NULL,
        PRIMARY KEY (platform, agent_id, sender_key)
      );
    `,
  },
  {
    name: 'group discussions',
    sql: `
      CREATE TABLE group_discussions (
        id text NOT NULL PRIMARY KEY,
        group_id text NOT NULL,
        created_on bigint NOT NULL,
        last_modified_on bigint NOT NULL,
        state text NOT NULL,
        lease_until bigint,
        body text NOT NULL
      );
      CREATE INDEX group_discussions_by_group ON group_discussions (group_id, created_on DESC, id DESC);
    `,
  },
  {
    name: 'knowledge bases: documents, chunks with their vectors, ingestions, revisions',
    sql: `
      CREATE TABLE rag_documents (
        kb_id text NOT NULL,
        id text NOT NULL,
        name text NOT NULL,
        content_type text NOT NULL,
        size_bytes bigint NOT NULL,
        content_hash text NOT NULL,
        chunk_count bigint NOT NULL,
        ingestion_id text NOT NULL,
        created_on bigint NOT NULL,
        updated_on bigint NOT NULL,
        revision bigint NOT NULL,
        PRIMARY KEY (kb_id, id)
      );
      CREATE TABLE rag_chunks (
        kb_id text NOT NULL,
        document_id text NOT NULL,
        chunk_index bigint NOT NULL,
        text text NOT NULL,
        embedding bytea NOT NULL,
        PRIMARY KEY (kb_id, document_id, chunk_index)
      );
      CREATE TABLE rag_ingestions (
        id text NOT NULL PRIMARY KEY,
        kb_id text NOT NULL,
        body text NOT NULL
      );
      CREATE INDEX rag_ingestions_by_kb ON rag_ingestions (kb_id);
      CREATE TABLE rag_revisions (
        kb_id text NOT NULL PRIMARY KEY,
        revision bigint NOT NULL
      );
    `,
  },
  {
    name: 'persistent user memory: entries per user, unique by key and owning agent (none for global entries)',
    sql: `
      CREATE TABLE user_memories (
        id text NOT NULL PRIMARY KEY,
        user_id text NOT NULL,
        key text NOT NULL,
        owner text NOT NULL,
        value text NOT NULL,
        category text NOT NULL,
        visibility text NOT NULL,
        source_agent_id text,
        group_ids text NOT NULL,
        source_conversation_id text,
        access_count bigint NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        UNIQUE (user_id, key, owner)
      );
      CREATE INDEX user_memories_by_update ON user_memories (updated_at);
    `,
  },
  {
    // One row per block of consecutive entries (a turn's, one per task) instead of one per entry, as the embedded
    // store keeps them (`src/ops/audit-block.ts`): a turn writes one row and two index entries instead of four rows
    // and twelve. Entries stored before are kept, each as a block of one.
    name: 'audit ledger: entries kept in blocks, one row per turn',
    sql: `
      CREATE TABLE audit_blocks (
        first_id text NOT NULL PRIMARY KEY,
        conversation_id text NOT NULL,
        first_sequence bigint NOT NULL,
        entry_count integer NOT NULL,
        agent_id text NOT NULL,
        agent_version integer NOT NULL,
        created_at text NOT NULL,
        documents text NOT NULL
      );
      CREATE INDEX audit_blocks_by_conversation ON audit_blocks (conversation_id, first_sequence, first_id);
      INSERT INTO audit_blocks
        (first_id, conversation_id, first_sequence, entry_count, agent_id, agent_version, created_at, documents)
        SELECT id, conversation_id, sequence, 1, agent_id, agent_version, created_at, '[' || document || ']'
        FROM audit_entries;
      DROP TABLE audit_entries;
      CREATE TRIGGER audit_blocks_write_once BEFORE UPDATE OR DELETE ON audit_blocks
        FOR EACH ROW EXECUTE FUNCTION audit_entries_refuse_change();
      CREATE TRIGGER audit_blocks_no_truncate BEFORE TRUNCATE ON audit_blocks
        FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_refuse_change();
    `,
  },
];
