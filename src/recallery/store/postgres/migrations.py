"""Numbered, append-only migrations of the PostgreSQL store. Never edit one that has shipped.

Every table carries ``tenant_id`` and every primary key leads with it, so the schema can be
distributed by tenant (Citus, see docs/deployment.md). The base's queries name entries by
``message_id`` and memories by ``id`` alone, so those keep a unique index of their own too.
Times are epoch seconds (``double precision``) and flags are integers, as in SQLite, so the
portable SQL of :mod:`recallery.store.reader` and :mod:`recallery.store.writer` runs unchanged.

Keyword search: ``entries.fts`` is a stored ``tsvector`` of the terms of the keyword analyzer
both stores share (since migration 21, :mod:`.documents`; before it, the server tokenised
like SQLite's FTS5 ``porter unicode61 remove_diacritics 2``), and ``fts_docs`` and
``fts_terms`` hold the per-memory document counts, token totals and document frequencies BM25
needs. Triggers keep
them exact; a term whose last document goes is deleted with it (erasure leaves no term row).
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from recallery.store.postgres.conn import PgConn
from recallery.store.postgres.documents import (
    reindex,
    reindex_arabic,
    reindex_latin,
    reindex_unspaced,
)
from recallery.store.postgres.initial import EXTENSIONS_AND_TEXT_SEARCH, TABLES
from recallery.store.postgres.keyword_writes import (
    DOCUMENTS_BROUGHT,
    KEYS_BY_PERSON,
    KEYS_IN_PLPGSQL,
    WRITE_ONCE,
)
from recallery.store.postgres.substrings import TEXT_TRIGRAMS
from recallery.store.postgres.tables_later import REQUEST_LOG, SUPERSESSIONS
from recallery.store.rows import ADD_LOCAL_MODEL
from recallery.store.sql import Row
from recallery.store.supersession import reslot

#: Dimensions that get an HNSW index in the migrations (the default embedder's 384).
#: Other dimensions are searched exactly; see docs/deployment.md to index another one.
HNSW_DIMENSIONS = (384,)

_TENANT_FILL = """
-- evidence and audit rows are written by the portable base without a tenant: take it from
-- the entry / memory they name ('' for events that belong to no memory, such as user admin).
CREATE FUNCTION recallery_evidence_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.tenant_id IS NULL THEN
        NEW.tenant_id := coalesce(
            (SELECT e.tenant_id FROM entries e WHERE e.message_id = NEW.message_id), '');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER evidence_tenant BEFORE INSERT ON evidence
    FOR EACH ROW EXECUTE FUNCTION recallery_evidence_tenant();
CREATE FUNCTION recallery_audit_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.tenant_id IS NULL THEN
        NEW.tenant_id := coalesce(
            (SELECT m.tenant_id FROM memories m WHERE m.id = NEW.memory_id), '');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER audit_tenant BEFORE INSERT ON audit
    FOR EACH ROW EXECUTE FUNCTION recallery_audit_tenant();
"""

_TERM_STATISTICS = """
CREATE TABLE fts_docs (
    tenant_id text NOT NULL,
    memory_id text NOT NULL,
    docs bigint NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
);
CREATE UNIQUE INDEX fts_docs_memory ON fts_docs (memory_id);
CREATE TABLE fts_terms (
    tenant_id text NOT NULL,
    memory_id text NOT NULL,
    term text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, term)
);
CREATE UNIQUE INDEX fts_terms_memory_term ON fts_terms (memory_id, term);

-- Statement-level triggers with transition tables: one upsert per statement, so COPY and
-- multi-row deletes update the statistics in bulk. Rows are touched in key order.
CREATE FUNCTION recallery_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df)
        SELECT n.tenant_id, n.memory_id, u.lexeme, count(*)
        FROM added n CROSS JOIN LATERAL unnest(n.fts) u
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE SET df = t.df + excluded.df;
    INSERT INTO fts_docs AS d (tenant_id, memory_id, docs, tokens)
        SELECT n.tenant_id, n.memory_id, count(*), sum(recallery_fts_len(n.fts))
        FROM added n GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, memory_id) DO UPDATE
        SET docs = d.docs + excluded.docs, tokens = d.tokens + excluded.tokens;
    RETURN NULL;
END $$;
CREATE FUNCTION recallery_fts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_terms t
        USING (SELECT o.tenant_id, o.memory_id, u.lexeme AS term, count(*) AS n
               FROM removed o CROSS JOIN LATERAL unnest(o.fts) u GROUP BY 1, 2, 3) g
        WHERE t.tenant_id = g.tenant_id AND t.memory_id = g.memory_id AND t.term = g.term
        AND t.df <= g.n;
    UPDATE fts_terms t SET df = t.df - g.n
        FROM (SELECT o.tenant_id, o.memory_id, u.lexeme AS term, count(*) AS n
              FROM removed o CROSS JOIN LATERAL unnest(o.fts) u GROUP BY 1, 2, 3) g
        WHERE t.tenant_id = g.tenant_id AND t.memory_id = g.memory_id AND t.term = g.term;
    DELETE FROM fts_docs d
        USING (SELECT o.tenant_id, o.memory_id, count(*) AS docs FROM removed o GROUP BY 1, 2) g
        WHERE d.tenant_id = g.tenant_id AND d.memory_id = g.memory_id AND d.docs <= g.docs;
    UPDATE fts_docs d SET docs = d.docs - g.docs, tokens = d.tokens - g.tokens
        FROM (SELECT o.tenant_id, o.memory_id, count(*) AS docs,
                     sum(recallery_fts_len(o.fts)) AS tokens
              FROM removed o GROUP BY 1, 2) g
        WHERE d.tenant_id = g.tenant_id AND d.memory_id = g.memory_id;
    RETURN NULL;
END $$;
CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION recallery_fts_added();
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION recallery_fts_removed();
-- A content change (rare: corrections write new rows) is a removal plus an addition.
CREATE FUNCTION recallery_fts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_terms t USING unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id
        AND t.term = u.lexeme AND t.df <= 1;
    UPDATE fts_terms t SET df = t.df - 1 FROM unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id AND t.term = u.lexeme;
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df)
        SELECT NEW.tenant_id, NEW.memory_id, u.lexeme, 1 FROM unnest(NEW.fts) u ORDER BY 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE SET df = t.df + 1;
    UPDATE fts_docs d
        SET tokens = d.tokens - recallery_fts_len(OLD.fts) + recallery_fts_len(NEW.fts)
        WHERE d.tenant_id = NEW.tenant_id AND d.memory_id = NEW.memory_id;
    RETURN NULL;
END $$;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF content ON entries
    FOR EACH ROW WHEN (OLD.fts IS DISTINCT FROM NEW.fts)
    EXECUTE FUNCTION recallery_fts_changed();
"""

_DOCUMENT_LENGTH = """
-- BM25's |D| stored with the row: scoring then reads only the query's lexemes of a document.
ALTER TABLE entries ADD COLUMN fts_len integer
    GENERATED ALWAYS AS (recallery_fts_len(recallery_fts_doc(content))) STORED;
CREATE OR REPLACE FUNCTION recallery_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df)
        SELECT n.tenant_id, n.memory_id, u.lexeme, count(*)
        FROM added n CROSS JOIN LATERAL unnest(n.fts) u
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE SET df = t.df + excluded.df;
    INSERT INTO fts_docs AS d (tenant_id, memory_id, docs, tokens)
        SELECT n.tenant_id, n.memory_id, count(*), sum(n.fts_len)
        FROM added n GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, memory_id) DO UPDATE
        SET docs = d.docs + excluded.docs, tokens = d.tokens + excluded.tokens;
    RETURN NULL;
END $$;
"""

_TENANT_KEYWORD_INDEX = """
-- One GIN index over (memory_id, fts): a keyword search walks only its memories' postings, so
-- other tenants' entries never cost it anything (entries_fts matched every tenant's entries,
-- then filtered). fastupdate with a small pending list: bulk loads batch their GIN inserts,
-- and a search scans at most 512 kB of pending entries.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX entries_memory_fts ON entries USING gin (memory_id, fts)
    WITH (fastupdate = on, gin_pending_list_limit = 512);
DROP INDEX entries_fts;
"""

_TERM_BOUNDS = """
-- Per memory and term, the largest term frequency and the shortest document holding it: with
-- them a term's BM25 contribution has an upper bound, so top-k search need not score every
-- match (store/postgres/topk.py). Deletions leave them as they were: still bounds, only looser.
ALTER TABLE fts_terms ADD COLUMN max_tf integer, ADD COLUMN min_len integer;
UPDATE fts_terms t SET max_tf = s.max_tf, min_len = s.min_len
    FROM (SELECT e.tenant_id, e.memory_id, u.lexeme AS term,
                 max(cardinality(u.positions)) AS max_tf, min(e.fts_len) AS min_len
          FROM entries e CROSS JOIN LATERAL unnest(e.fts) u GROUP BY 1, 2, 3) s
    WHERE t.tenant_id = s.tenant_id AND t.memory_id = s.memory_id AND t.term = s.term;
UPDATE fts_terms SET max_tf = 256, min_len = 0 WHERE max_tf IS NULL;  -- the loosest bounds
ALTER TABLE fts_terms ALTER COLUMN max_tf SET NOT NULL, ALTER COLUMN min_len SET NOT NULL;
CREATE OR REPLACE FUNCTION recallery_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df, max_tf, min_len)
        SELECT n.tenant_id, n.memory_id, u.lexeme, count(*), max(cardinality(u.positions)),
               min(n.fts_len)
        FROM added n CROSS JOIN LATERAL unnest(n.fts) u
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE
        SET df = t.df + excluded.df, max_tf = greatest(t.max_tf, excluded.max_tf),
            min_len = least(t.min_len, excluded.min_len);
    INSERT INTO fts_docs AS d (tenant_id, memory_id, docs, tokens)
        SELECT n.tenant_id, n.memory_id, count(*), sum(n.fts_len)
        FROM added n GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, memory_id) DO UPDATE
        SET docs = d.docs + excluded.docs, tokens = d.tokens + excluded.tokens;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION recallery_fts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_terms t USING unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id
        AND t.term = u.lexeme AND t.df <= 1;
    UPDATE fts_terms t SET df = t.df - 1 FROM unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id AND t.term = u.lexeme;
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df, max_tf, min_len)
        SELECT NEW.tenant_id, NEW.memory_id, u.lexeme, 1, cardinality(u.positions), NEW.fts_len
        FROM unnest(NEW.fts) u ORDER BY 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE
        SET df = t.df + 1, max_tf = greatest(t.max_tf, excluded.max_tf),
            min_len = least(t.min_len, excluded.min_len);
    UPDATE fts_docs d
        SET tokens = d.tokens - OLD.fts_len + NEW.fts_len
        WHERE d.tenant_id = NEW.tenant_id AND d.memory_id = NEW.memory_id;
    RETURN NULL;
END $$;
"""

_LENGTH_TIERS = """
-- The keyword index files each lexeme of a document as 'lexeme/tier/memory': the document's
-- length tier (tiers start about 1.25 apart) and the first 8 hex digits of its memory id's
-- md5. A top-k round asks for a term only in the tiers where it can still reach the
-- threshold (short documents score higher), and a search only ever reads its own memories'
-- postings: other tenants' entries cost it nothing (with (memory_id, fts) a search skipped
-- through every tenant's postings of its terms). Two memories whose ids share the prefix
-- share postings; the memory filter still applies. fts_terms keeps the longest document
-- holding each term as well: tiers above it hold none (store/postgres/topk.py).
CREATE FUNCTION recallery_fts_tier(len integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN width_bucket(len, ARRAY[8, 10, 13, 16, 20, 25, 32, 40, 50, 64, 80, 100, 128, 160, 200,
                                   256, 320, 400, 512]);
CREATE FUNCTION recallery_fts_keys(memory text, doc tsvector, len integer) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT array_to_tsvector(ARRAY(
                SELECT u || x.suffix FROM unnest(tsvector_to_array(doc)) u))
            FROM (SELECT '/' || recallery_fts_tier(len) || '/' || left(md5(memory), 8)
                  AS suffix) x);
CREATE INDEX entries_fts_keys ON entries USING gin (recallery_fts_keys(memory_id, fts, fts_len))
    WITH (fastupdate = on, gin_pending_list_limit = 512);
DROP INDEX entries_memory_fts;
ALTER TABLE fts_terms ADD COLUMN max_len integer;
UPDATE fts_terms t SET max_len = s.max_len
    FROM (SELECT e.tenant_id, e.memory_id, u AS term, max(e.fts_len) AS max_len
          FROM entries e CROSS JOIN LATERAL unnest(tsvector_to_array(e.fts)) u
          GROUP BY 1, 2, 3) s
    WHERE t.tenant_id = s.tenant_id AND t.memory_id = s.memory_id AND t.term = s.term;
UPDATE fts_terms SET max_len = 2147483647 WHERE max_len IS NULL;  -- the loosest bound
ALTER TABLE fts_terms ALTER COLUMN max_len SET NOT NULL;
CREATE OR REPLACE FUNCTION recallery_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df, max_tf, min_len, max_len)
        SELECT n.tenant_id, n.memory_id, u.lexeme, count(*), max(cardinality(u.positions)),
               min(n.fts_len), max(n.fts_len)
        FROM added n CROSS JOIN LATERAL unnest(n.fts) u
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE
        SET df = t.df + excluded.df, max_tf = greatest(t.max_tf, excluded.max_tf),
            min_len = least(t.min_len, excluded.min_len),
            max_len = greatest(t.max_len, excluded.max_len);
    INSERT INTO fts_docs AS d (tenant_id, memory_id, docs, tokens)
        SELECT n.tenant_id, n.memory_id, count(*), sum(n.fts_len)
        FROM added n GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (tenant_id, memory_id) DO UPDATE
        SET docs = d.docs + excluded.docs, tokens = d.tokens + excluded.tokens;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION recallery_fts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_terms t USING unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id
        AND t.term = u.lexeme AND t.df <= 1;
    UPDATE fts_terms t SET df = t.df - 1 FROM unnest(OLD.fts) u
        WHERE t.tenant_id = OLD.tenant_id AND t.memory_id = OLD.memory_id AND t.term = u.lexeme;
    INSERT INTO fts_terms AS t (tenant_id, memory_id, term, df, max_tf, min_len, max_len)
        SELECT NEW.tenant_id, NEW.memory_id, u.lexeme, 1, cardinality(u.positions), NEW.fts_len,
               NEW.fts_len
        FROM unnest(NEW.fts) u ORDER BY 3
    ON CONFLICT (tenant_id, memory_id, term) DO UPDATE
        SET df = t.df + 1, max_tf = greatest(t.max_tf, excluded.max_tf),
            min_len = least(t.min_len, excluded.min_len),
            max_len = greatest(t.max_len, excluded.max_len);
    UPDATE fts_docs d
        SET tokens = d.tokens - OLD.fts_len + NEW.fts_len
        WHERE d.tenant_id = NEW.tenant_id AND d.memory_id = NEW.memory_id;
    RETURN NULL;
END $$;
"""

#: A migration's work: SQL, or a function run on the migrating connection (in its transaction)
#: where the work needs Python (re-indexing with the analyzer).
Script = str | Callable[[psycopg.Connection[Row]], None]


def reslot_again(raw: psycopg.Connection[Row]) -> None:
    """Migrations 23, 25, 26, 27 and 30: the slots of stored turns that today's patterns read
    otherwise, again."""
    reslot(PgConn(raw))


MIGRATIONS: tuple[tuple[int, str, Script], ...] = (
    (1, "extensions and text search", EXTENSIONS_AND_TEXT_SEARCH),
    (2, "initial schema", TABLES),
    (3, "tenant of evidence and audit rows", _TENANT_FILL),
    (4, "BM25 term statistics", _TERM_STATISTICS),
    (
        5,
        "conversation order index for neighbour lookups",
        "CREATE INDEX entries_conversation ON entries "
        "(memory_id, session_id, user_id, agent_id, valid_at, message_id);",
    ),
    (6, "stored document length for BM25", _DOCUMENT_LENGTH),
    (
        7,
        "what an API key may do (NULL: everything)",
        "ALTER TABLE api_keys ADD COLUMN capabilities text;",
    ),
    (8, "keyword index per memory (btree_gin)", _TENANT_KEYWORD_INDEX),
    (9, "term frequency and length bounds for top-k BM25", _TERM_BOUNDS),
    (
        10,
        "entries stay in their heap page up to 8 kB (vectors not toasted)",
        # A 384-d vector (1.5 kB) pushed most rows past the 2 kB default, so each vector read
        # went through the TOAST index and page: 4 buffers a row, scattered across every
        # tenant's data. Rows written before keep their TOAST pointers until rewritten.
        "ALTER TABLE entries SET (toast_tuple_target = 8160);",
    ),
    (11, "keyword index by length tier, longest document per term", _LENGTH_TIERS),
    (
        12,
        "conversation index covers the entry type (index-only neighbour lookups)",
        # Neighbour lookups keep raw turns only: with the type in the index they read no
        # heap page (a million-entry memory: 4.8 to 2.6 ms a search's lookup).
        "DROP INDEX entries_conversation; CREATE INDEX entries_conversation ON entries "
        "(memory_id, session_id, user_id, agent_id, valid_at, message_id) INCLUDE (message_type);",
    ),
    (13, "keyword work once per written row", WRITE_ONCE),
    (14, "an insert may bring its keyword documents and term counts", DOCUMENTS_BROUGHT),
    (
        15,
        "the keyword index's key function priced at what it costs",
        # Built row by row (tens of microseconds, and once per OR'd term), it was priced as an
        # operator (COST 100): with 3M entries in 3,000 memories the planner fetched a small
        # memory's rows by memory id and built every row's keys to check them, where ANDing
        # the keyword index with the memory's index reads only the matches (172 -> 8 ms).
        "ALTER FUNCTION recallery_fts_keys(text, tsvector, integer) COST 1000;",
    ),
    (16, "the keyword index's keys built in PL/pgSQL", KEYS_IN_PLPGSQL),
    (17, "the request log: who read what (entry ids go with their entries)", REQUEST_LOG),
    (
        18,
        "entries by end user, type and record time (a person's page counts without a scan)",
        "CREATE INDEX entries_memory_user ON entries "
        "(memory_id, user_id, recorded_at, message_type);",
    ),
    (19, "slots of raw turns and the supersessions between them", SUPERSESSIONS),
    (20, "a trigram index of the extracted entries' text, where pg_trgm is", TEXT_TRIGRAMS),
    (
        21,
        "keyword documents from the analyzer of every language, brought by every writer",
        reindex,
    ),
    (22, "the local model of each memory, fixed at creation (NULL: a provider's)", ADD_LOCAL_MODEL),
    (23, "slots of the turns stored in the languages that gained slot patterns", reslot_again),
    (24, "keyword documents of Arabic text, light-stemmed", reindex_arabic),
    (
        25,
        "slots again in seven languages: a joined clause keeps its subject, a value ends at with",
        reslot_again,
    ),
    (26, "slots again: time words, verb-second German, short Latin sentences", reslot_again),
    (
        27,
        "slots again: English begun, going on or hired, a value ends before how long",
        reslot_again,
    ),
    (28, "keyword documents of Thai, Lao, Myanmar, Khmer and Devanagari text", reindex_unspaced),
    (29, "the keyword index keyed by person too (a person's search reads theirs)", KEYS_BY_PERSON),
    (30, "slots of the turns stored in Hindi and Thai, which gained slot patterns", reslot_again),
    (31, "keyword documents of text in ten more Latin-script languages", reindex_latin),
)
