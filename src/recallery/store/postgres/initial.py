"""The SQL of the PostgreSQL store's first two migrations: the extensions and text search
configuration, then the initial schema (see :mod:`recallery.store.postgres.migrations`, which
numbers and applies them; never edit SQL that has shipped)."""

from __future__ import annotations

EXTENSIONS_AND_TEXT_SEARCH = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH DICTIONARY recallery_porter (TEMPLATE = snowball, Language = porter);
CREATE TEXT SEARCH CONFIGURATION recallery_fts (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION recallery_fts
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part,
        numword, numhword, hword_numpart, uint, int, float, sfloat, version, email, url,
        host, url_path, file
    WITH unaccent, recallery_porter;

-- FTS5's unicode61 splits on every character that is not a letter or digit: do the same
-- before PostgreSQL's parser, which would otherwise keep e-mails, URLs and hyphenated words.
CREATE FUNCTION recallery_fts_doc(body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_tsvector('recallery_fts'::regconfig, regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'));

-- Tokens in a document (BM25's |D|): every occurrence, stop words included, as FTS5 counts.
CREATE FUNCTION recallery_fts_len(doc tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(sum(cardinality(u.positions)), 0)::integer FROM unnest(doc) u);
"""

TABLES = """
CREATE TABLE users (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    is_admin integer NOT NULL DEFAULT 0,
    created_at double precision NOT NULL
);
CREATE TABLE memberships (
    tenant_id text NOT NULL,
    user_id text NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);
CREATE TABLE api_keys (
    id text PRIMARY KEY,
    user_id text NOT NULL,
    key_hash text NOT NULL UNIQUE,
    name text NOT NULL DEFAULT '',
    scope text,
    created_at double precision NOT NULL,
    revoked_at double precision
);
CREATE INDEX api_keys_user ON api_keys (user_id);
CREATE TABLE memories (
    tenant_id text NOT NULL,
    id text NOT NULL,
    name text NOT NULL,
    memory_types integer NOT NULL,
    embd_id text NOT NULL,
    llm_id text NOT NULL,
    permissions text NOT NULL,
    memory_size bigint NOT NULL,
    forgetting_policy text NOT NULL,
    temperature double precision NOT NULL,
    system_prompt text,
    user_prompt text,
    avatar text,
    description text,
    storage_type text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    used_bytes bigint NOT NULL DEFAULT 0,
    entry_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, name)
);
CREATE UNIQUE INDEX memories_id ON memories (id);
CREATE INDEX memories_tenant_updated ON memories (tenant_id, updated_at);

CREATE SEQUENCE entries_message_id_seq AS bigint;
CREATE TABLE entries (
    tenant_id text NOT NULL,
    message_id bigint NOT NULL DEFAULT nextval('entries_message_id_seq'),
    memory_id text NOT NULL,
    message_type text NOT NULL,
    content text NOT NULL,
    embedding vector,
    valid_at double precision NOT NULL,
    recorded_at double precision NOT NULL,
    user_id text NOT NULL DEFAULT '',
    agent_id text NOT NULL DEFAULT '',
    session_id text NOT NULL DEFAULT '',
    source_id bigint,
    invalid_at double precision,
    retired_at double precision,
    supersedes bigint,
    superseded_by bigint,
    status integer NOT NULL DEFAULT 1,
    trust text NOT NULL DEFAULT 'unreviewed',
    origin text NOT NULL,
    forget_at double precision,
    last_used_at double precision,
    use_count integer NOT NULL DEFAULT 0,
    size_bytes integer NOT NULL,
    fts tsvector GENERATED ALWAYS AS (recallery_fts_doc(content)) STORED,
    PRIMARY KEY (tenant_id, message_id)
);
ALTER SEQUENCE entries_message_id_seq OWNED BY entries.message_id;
CREATE UNIQUE INDEX entries_message_id ON entries (message_id);
CREATE INDEX entries_memory_id ON entries (memory_id, message_id);
CREATE INDEX entries_memory_recorded ON entries (memory_id, recorded_at);
CREATE INDEX entries_memory_valid ON entries (memory_id, valid_at);
CREATE INDEX entries_memory_forget ON entries (memory_id, forget_at);
CREATE INDEX entries_source ON entries (source_id);
CREATE INDEX entries_supersedes ON entries (supersedes);
CREATE INDEX entries_fts ON entries USING gin (fts) WITH (fastupdate = off);
CREATE INDEX entries_hnsw_384 ON entries
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE vector_dims(embedding) = 384;

CREATE TABLE evidence (
    tenant_id text NOT NULL,
    message_id bigint NOT NULL,
    source_id bigint NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (tenant_id, message_id, source_id)
);
CREATE UNIQUE INDEX evidence_message_source ON evidence (message_id, source_id);
CREATE TABLE tombstones (
    tenant_id text NOT NULL,
    message_id bigint NOT NULL,
    memory_id text NOT NULL,
    message_type text NOT NULL,
    valid_at double precision NOT NULL,
    recorded_at double precision NOT NULL,
    erased_at double precision NOT NULL,
    actor text NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (tenant_id, message_id)
);
CREATE UNIQUE INDEX tombstones_message_id ON tombstones (message_id);
CREATE INDEX tombstones_memory ON tombstones (memory_id, message_id);
CREATE SEQUENCE audit_id_seq AS bigint;
CREATE TABLE audit (
    tenant_id text NOT NULL,
    id bigint NOT NULL DEFAULT nextval('audit_id_seq'),
    at double precision NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    memory_id text,
    message_id bigint,
    reason text NOT NULL DEFAULT '',
    before text NOT NULL DEFAULT '{}',
    after text NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, id)
);
ALTER SEQUENCE audit_id_seq OWNED BY audit.id;
CREATE UNIQUE INDEX audit_id ON audit (id);
CREATE INDEX audit_memory ON audit (memory_id, id);
CREATE INDEX audit_message ON audit (message_id);
CREATE SEQUENCE jobs_id_seq AS bigint;
CREATE TABLE jobs (
    tenant_id text NOT NULL,
    id bigint NOT NULL DEFAULT nextval('jobs_id_seq'),
    kind text NOT NULL,
    memory_id text NOT NULL,
    message_id bigint,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    progress double precision NOT NULL DEFAULT 0,
    progress_msg text NOT NULL DEFAULT '',
    outcome text,
    result text,
    run_after double precision,
    lease_until double precision,
    lease_owner text,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
ALTER SEQUENCE jobs_id_seq OWNED BY jobs.id;
CREATE UNIQUE INDEX jobs_id ON jobs (id);
CREATE INDEX jobs_queued ON jobs (state, run_after);
CREATE INDEX jobs_leased ON jobs (state, lease_until);
CREATE INDEX jobs_message ON jobs (message_id);
CREATE INDEX jobs_memory ON jobs (memory_id);
"""
