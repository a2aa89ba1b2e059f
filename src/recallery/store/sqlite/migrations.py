"""Numbered, append-only migrations of the SQLite store: SQL scripts, or a function run on
the migrating connection (in its transaction) where the work needs Python. Never edit one
that has shipped."""

from __future__ import annotations

from collections.abc import Callable

from recallery.store.rows import ADD_LOCAL_MODEL
from recallery.store.sql import Conn
from recallery.store.supersession import reslot

#: A migration's work: SQL (split by :func:`.connections.statements`), or a function.
Script = str | Callable[[Conn], object]

MIGRATIONS: tuple[tuple[int, str, Script], ...] = (
    (
        1,
        "initial schema",
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            is_admin INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE TABLE memberships (
            tenant_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            PRIMARY KEY (tenant_id, user_id)
        );
        CREATE INDEX memberships_user ON memberships (user_id);
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            key_hash TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL DEFAULT '',
            scope TEXT,
            created_at REAL NOT NULL,
            revoked_at REAL
        );
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            memory_types INTEGER NOT NULL,
            embd_id TEXT NOT NULL,
            llm_id TEXT NOT NULL,
            permissions TEXT NOT NULL,
            memory_size INTEGER NOT NULL,
            forgetting_policy TEXT NOT NULL,
            temperature REAL NOT NULL,
            system_prompt TEXT,
            user_prompt TEXT,
            avatar TEXT,
            description TEXT,
            storage_type TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            used_bytes INTEGER NOT NULL DEFAULT 0,
            entry_count INTEGER NOT NULL DEFAULT 0,
            UNIQUE (tenant_id, name)
        );
        CREATE TABLE entries (
            message_id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            message_type TEXT NOT NULL,
            content TEXT NOT NULL,
            embedding BLOB,
            valid_at REAL NOT NULL,
            recorded_at REAL NOT NULL,
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            source_id INTEGER,
            invalid_at REAL,
            retired_at REAL,
            supersedes INTEGER,
            superseded_by INTEGER,
            status INTEGER NOT NULL DEFAULT 1,
            trust TEXT NOT NULL DEFAULT 'unreviewed',
            origin TEXT NOT NULL,
            forget_at REAL,
            last_used_at REAL,
            use_count INTEGER NOT NULL DEFAULT 0,
            size_bytes INTEGER NOT NULL
        );
        CREATE INDEX entries_memory_recorded ON entries (memory_id, recorded_at);
        CREATE INDEX entries_memory_valid ON entries (memory_id, valid_at);
        CREATE INDEX entries_memory_forget ON entries (memory_id, forget_at);
        CREATE INDEX entries_source ON entries (source_id);
        CREATE INDEX entries_supersedes ON entries (supersedes);
        CREATE VIRTUAL TABLE entries_fts USING fts5 (
            content,
            content = 'entries',
            content_rowid = 'message_id',
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
            INSERT INTO entries_fts (rowid, content) VALUES (new.message_id, new.content);
        END;
        CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content)
            VALUES ('delete', old.message_id, old.content);
        END;
        CREATE TRIGGER entries_fts_update AFTER UPDATE OF content ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content)
            VALUES ('delete', old.message_id, old.content);
            INSERT INTO entries_fts (rowid, content) VALUES (new.message_id, new.content);
        END;
        CREATE TABLE evidence (
            message_id INTEGER NOT NULL,
            source_id INTEGER NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (message_id, source_id)
        );
        CREATE TABLE tombstones (
            message_id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            message_type TEXT NOT NULL,
            valid_at REAL NOT NULL,
            recorded_at REAL NOT NULL,
            erased_at REAL NOT NULL,
            actor TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE INDEX tombstones_memory ON tombstones (memory_id);
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            memory_id TEXT,
            message_id INTEGER,
            reason TEXT NOT NULL DEFAULT '',
            before TEXT NOT NULL DEFAULT '{}',
            after TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX audit_memory ON audit (memory_id, id);
        CREATE INDEX audit_message ON audit (message_id);
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            message_id INTEGER,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            progress REAL NOT NULL DEFAULT 0,
            progress_msg TEXT NOT NULL DEFAULT '',
            outcome TEXT,
            result TEXT,
            run_after REAL,
            lease_until REAL,
            lease_owner TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX jobs_claim ON jobs (state, run_after);
        CREATE INDEX jobs_message ON jobs (message_id);
        CREATE INDEX jobs_memory ON jobs (memory_id);
        """,
    ),
    (
        2,
        "conversation order index for neighbour lookups",
        """
        CREATE INDEX entries_conversation ON entries
            (memory_id, session_id, user_id, agent_id, valid_at, message_id);
        """,
    ),
    (
        3,
        "keyword index carries the memory id, ranks content only",
        """
        DROP TRIGGER entries_fts_insert;
        DROP TRIGGER entries_fts_delete;
        DROP TRIGGER entries_fts_update;
        DROP TABLE entries_fts;
        CREATE VIRTUAL TABLE entries_fts USING fts5 (
            content,
            memory_id,
            content = 'entries',
            content_rowid = 'message_id',
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO entries_fts (entries_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
        INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
        CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
            INSERT INTO entries_fts (rowid, content, memory_id)
            VALUES (new.message_id, new.content, new.memory_id);
        END;
        CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content, memory_id)
            VALUES ('delete', old.message_id, old.content, old.memory_id);
        END;
        CREATE TRIGGER entries_fts_update AFTER UPDATE OF content, memory_id ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content, memory_id)
            VALUES ('delete', old.message_id, old.content, old.memory_id);
            INSERT INTO entries_fts (rowid, content, memory_id)
            VALUES (new.message_id, new.content, new.memory_id);
        END;
        """,
    ),
    (
        4,
        "keyword search moves to the in-process index: drop FTS5",
        """
        DROP TRIGGER entries_fts_insert;
        DROP TRIGGER entries_fts_delete;
        DROP TRIGGER entries_fts_update;
        DROP TABLE entries_fts;
        """,
    ),
    (
        5,
        "a covering index for the filter checks of search candidates",
        """
        CREATE INDEX entries_filter ON entries (
            message_id, memory_id, message_type, user_id, agent_id, session_id, source_id,
            status, trust, valid_at, invalid_at, recorded_at, retired_at, forget_at
        );
        """,
    ),
    (
        6,
        "what an API key may do (NULL: everything)",
        "ALTER TABLE api_keys ADD COLUMN capabilities TEXT;",
    ),
    (
        7,
        "a change log of entries: which rows changed or went, for every process's indexes",
        """
        CREATE TABLE entry_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            message_id INTEGER NOT NULL
        );
        CREATE TRIGGER entries_changed AFTER UPDATE OF
            memory_id, message_type, content, embedding, user_id, agent_id, session_id,
            status, trust, valid_at, invalid_at, recorded_at, retired_at, forget_at
        ON entries BEGIN
            INSERT INTO entry_changes (message_id) VALUES (new.message_id);
        END;
        CREATE TRIGGER entries_deleted AFTER DELETE ON entries BEGIN
            INSERT INTO entry_changes (message_id) VALUES (old.message_id);
        END;
        """,
    ),
    (
        8,
        "snapshots of the in-process indexes; erasing or rewriting an entry drops its memory's",
        """
        CREATE TABLE index_snapshots (
            memory_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            part INTEGER NOT NULL,
            rows_high INTEGER NOT NULL,
            changes_seq INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (memory_id, kind, part)
        );
        CREATE TRIGGER entries_deleted_snapshots AFTER DELETE ON entries BEGIN
            DELETE FROM index_snapshots WHERE memory_id = old.memory_id;
        END;
        CREATE TRIGGER entries_rewritten_snapshots AFTER UPDATE OF
            memory_id, message_type, content, embedding, user_id, agent_id, session_id, valid_at
        ON entries BEGIN
            DELETE FROM index_snapshots WHERE memory_id IN (old.memory_id, new.memory_id);
        END;
        """,
    ),
    (
        9,
        "how far the change log was pruned (a process behind it rebuilds its indexes)",
        """
        CREATE TABLE entry_changes_pruned (through INTEGER NOT NULL);
        INSERT INTO entry_changes_pruned (through) VALUES (0);
        """,
    ),
    (
        10,
        "the request log: who read what (entry ids go with their entries)",
        """
        CREATE TABLE requests (
            tenant_id TEXT NOT NULL,
            id TEXT NOT NULL,
            at REAL NOT NULL,
            channel TEXT NOT NULL,
            route TEXT NOT NULL,
            status INTEGER NOT NULL,
            latency_ms REAL NOT NULL,
            key_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            memory_ids TEXT NOT NULL DEFAULT '',
            query TEXT,
            PRIMARY KEY (tenant_id, id)
        );
        CREATE UNIQUE INDEX requests_id ON requests (id);
        CREATE INDEX requests_at ON requests (at);
        CREATE INDEX requests_key ON requests (key_id, at);
        CREATE INDEX requests_user ON requests (user_id, at);
        CREATE TABLE request_entries (
            tenant_id TEXT NOT NULL,
            message_id INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            how TEXT NOT NULL,
            at REAL NOT NULL,
            key_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (tenant_id, message_id, request_id, how)
        );
        CREATE INDEX request_entries_message ON request_entries (message_id);
        CREATE INDEX request_entries_request ON request_entries (request_id);
        CREATE TRIGGER entries_deleted_requests AFTER DELETE ON entries BEGIN
            DELETE FROM request_entries WHERE message_id = old.message_id;
        END;
        """,
    ),
    (
        11,
        "entries by end user, type and record time (a person's page counts without a scan)",
        "CREATE INDEX entries_memory_user ON entries "
        "(memory_id, user_id, recorded_at, message_type);",
    ),
    (
        12,
        "slots of raw turns and the supersessions between them (they go with their entries)",
        """
        CREATE TABLE turn_slots (
            tenant_id TEXT NOT NULL,
            message_id INTEGER NOT NULL,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            slot TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (message_id, slot)
        );
        CREATE INDEX turn_slots_user ON turn_slots (memory_id, user_id, slot);
        CREATE TABLE supersessions (
            tenant_id TEXT NOT NULL,
            older INTEGER NOT NULL,
            newer INTEGER NOT NULL,
            memory_id TEXT NOT NULL,
            PRIMARY KEY (older, newer)
        );
        CREATE INDEX supersessions_newer ON supersessions (newer);
        CREATE TRIGGER entries_deleted_slots AFTER DELETE ON entries BEGIN
            DELETE FROM turn_slots WHERE message_id = old.message_id;
            DELETE FROM supersessions WHERE older = old.message_id OR newer = old.message_id;
        END;
        """,
    ),
    (
        13,
        "a trigram index of the extracted entries' text (a substring filter reads it first)",
        """
        CREATE VIRTUAL TABLE entries_text USING fts5(
            content, content = '', tokenize = 'trigram', detail = 'none'
        );
        INSERT INTO entries_text (rowid, content)
            SELECT message_id, content FROM entries WHERE message_type != 'raw';
        CREATE TRIGGER entries_text_added AFTER INSERT ON entries
        WHEN new.message_type != 'raw' BEGIN
            INSERT INTO entries_text (rowid, content) VALUES (new.message_id, new.content);
        END;
        CREATE TRIGGER entries_text_deleted AFTER DELETE ON entries
        WHEN old.message_type != 'raw' BEGIN
            INSERT INTO entries_text (entries_text, rowid, content)
                VALUES ('delete', old.message_id, old.content);
        END;
        CREATE TRIGGER entries_text_rewritten AFTER UPDATE OF content, message_type ON entries
        BEGIN
            INSERT INTO entries_text (entries_text, rowid, content)
                SELECT 'delete', old.message_id, old.content WHERE old.message_type != 'raw';
            INSERT INTO entries_text (rowid, content)
                SELECT new.message_id, new.content WHERE new.message_type != 'raw';
        END;
        """,
    ),
    (
        14,
        "entries by memory, type and state (a page's count reads the index, not the rows)",
        # A page's count read every row of the memory (46-61 ms at 100k), now the index: 7-19
        "CREATE INDEX entries_memory_state ON entries "
        "(memory_id, message_type, retired_at, forget_at, status, trust);",
    ),
    (15, "the local model of each memory, fixed at creation (NULL: a provider's)", ADD_LOCAL_MODEL),
    (16, "slots of the turns stored in the languages that gained slot patterns", reslot),
    (
        17,
        "slots again in seven languages: a joined clause keeps its subject, a value ends at with",
        reslot,
    ),
    (18, "slots again: time words, verb-second German, short Latin sentences", reslot),
    (19, "slots again: English begun, going on or hired, a value ends before how long", reslot),
    (20, "slots of the turns stored in Hindi and Thai, which gained slot patterns", reslot),
)
