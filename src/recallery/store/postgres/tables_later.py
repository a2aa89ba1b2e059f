"""Tables the PostgreSQL store gained after its initial schema, as their migrations create them
(:mod:`.migrations` numbers them): the request log, and the slots and supersessions of raw
turns. Kept apart so the migration list stays one screen; never edit one that has shipped."""

from __future__ import annotations

REQUEST_LOG = """
-- requests: the caller's tenant (their user id; '' before authentication). request_entries:
-- the entry's tenant, so the rows sit with their entry and go with it (the foreign key's
-- cascade: an erased, evicted or deleted entry leaves no id in the log, even when a log
-- write races its erasure).
CREATE TABLE requests (
    tenant_id text NOT NULL,
    id text NOT NULL,
    at double precision NOT NULL,
    channel text NOT NULL,
    route text NOT NULL,
    status integer NOT NULL,
    latency_ms double precision NOT NULL,
    key_id text NOT NULL DEFAULT '',
    user_id text NOT NULL DEFAULT '',
    memory_ids text NOT NULL DEFAULT '',
    query text,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX requests_id ON requests (id);
CREATE INDEX requests_at ON requests (at);
CREATE INDEX requests_key ON requests (key_id, at);
CREATE INDEX requests_user ON requests (user_id, at);
CREATE TABLE request_entries (
    tenant_id text NOT NULL,
    message_id bigint NOT NULL,
    request_id text NOT NULL,
    how text NOT NULL,
    at double precision NOT NULL,
    key_id text NOT NULL DEFAULT '',
    user_id text NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, message_id, request_id, how),
    FOREIGN KEY (tenant_id, message_id) REFERENCES entries (tenant_id, message_id)
        ON DELETE CASCADE
);
CREATE INDEX request_entries_message ON request_entries (message_id);
CREATE INDEX request_entries_request ON request_entries (request_id);
"""

SUPERSESSIONS = """
CREATE TABLE turn_slots (tenant_id text NOT NULL, message_id bigint NOT NULL,
    memory_id text NOT NULL, user_id text NOT NULL, slot text NOT NULL, value text NOT NULL,
    PRIMARY KEY (message_id, slot), FOREIGN KEY (tenant_id, message_id)
    REFERENCES entries (tenant_id, message_id) ON DELETE CASCADE);
CREATE INDEX turn_slots_user ON turn_slots (memory_id, user_id, slot);
CREATE TABLE supersessions (tenant_id text NOT NULL, older bigint NOT NULL,
    newer bigint NOT NULL, memory_id text NOT NULL, PRIMARY KEY (older, newer),
    FOREIGN KEY (tenant_id, older) REFERENCES entries (tenant_id, message_id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, newer) REFERENCES entries (tenant_id, message_id) ON DELETE CASCADE);
CREATE INDEX supersessions_newer ON supersessions (newer);
"""
