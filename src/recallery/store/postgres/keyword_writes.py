"""The keyword work of writes, as migrations 13, 14, 16 and 29 changed it: how an inserted
row gets its document, length and index keys, and how a bulk write brings its own.

Kept apart from :mod:`.migrations`, which numbers them: these three are about what a write
costs, the others about what the schema holds. Never edit one that has shipped.
"""

from __future__ import annotations

# Writes, a row's keyword work done once: the text is tokenised once for fts and its length
# (two generated columns tokenised it twice), and the keyword index's keys are built without a
# subquery per lexeme (a lexeme holds no \x01: the text's non-alphanumerics became spaces).
# Same values as before, so the index built on the old function stays valid.
WRITE_ONCE = r"""
CREATE OR REPLACE FUNCTION recallery_fts_keys(memory text, doc tsvector, len integer)
    RETURNS tsvector LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT CASE WHEN doc = ''::tsvector THEN doc ELSE array_to_tsvector(string_to_array(
                array_to_string(tsvector_to_array(doc), x.suffix || E'\x01') || x.suffix,
                E'\x01')) END
            FROM (SELECT '/' || recallery_fts_tier(len) || '/' || left(md5(memory), 8)
                  AS suffix) x);
ALTER TABLE entries ALTER COLUMN fts DROP EXPRESSION;
ALTER TABLE entries ALTER COLUMN fts_len DROP EXPRESSION;
CREATE FUNCTION recallery_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.fts := recallery_fts_doc(NEW.content);
    NEW.fts_len := recallery_fts_len(NEW.fts);
    RETURN NEW;
END $$;
CREATE TRIGGER entries_fts_fill BEFORE INSERT OR UPDATE OF content, fts, fts_len ON entries
    FOR EACH ROW EXECUTE FUNCTION recallery_fts_fill();
-- Every write batch updates its terms' rows: room on their pages keeps those updates HOT (no
-- new index entry). Pages written from now on.
ALTER TABLE fts_terms SET (fillfactor = 70);
"""

# A bulk write brings its rows' keyword documents and their BM25 counts, computed by the
# server's own functions on a second connection (store/postgres/bulk.py): an insert that brings
# a document and its length keeps them, and a statement run while the transaction's setting
# recallery.counts_brought is 'on' leaves fts_terms and fts_docs to the writer, which adds the
# brought counts itself, in the same order. Every other insert, and every change of content,
# is tokenised and counted here as before.
DOCUMENTS_BROUGHT = """
CREATE OR REPLACE FUNCTION recallery_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.fts IS NOT NULL AND NEW.fts_len IS NOT NULL THEN
        RETURN NEW;
    END IF;
    NEW.fts := recallery_fts_doc(NEW.content);
    NEW.fts_len := recallery_fts_len(NEW.fts);
    RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION recallery_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('recallery.counts_brought', true) = 'on' THEN
        RETURN NULL;
    END IF;
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
"""

# The keyword index's keys built in PL/pgSQL: the SQL function's subquery kept it from being
# inlined, so it ran as a statement of its own for every row (15.5-18.4 us a row over 100,000
# LoCoMo turns; 7.0-7.9 in PL/pgSQL). Same keys, so the index stays valid, and PL/pgSQL is
# never inlined, so the planner keeps migration 15's price. PL/pgSQL looks names up when it
# runs, and VACUUM, ANALYZE and index builds run it with only pg_catalog on the search path:
# the tier is migration 11's width_bucket written out, not a call of recallery_fts_tier.
KEYS_IN_PLPGSQL = r"""
CREATE OR REPLACE FUNCTION recallery_fts_keys(memory text, doc tsvector, len integer)
    RETURNS tsvector LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$
DECLARE
    suffix text := '/' || width_bucket(len, ARRAY[8, 10, 13, 16, 20, 25, 32, 40, 50, 64, 80,
        100, 128, 160, 200, 256, 320, 400, 512]) || '/' || left(md5(memory), 8);
BEGIN
    IF doc = ''::tsvector THEN
        RETURN doc;
    END IF;
    RETURN array_to_tsvector(string_to_array(
        array_to_string(tsvector_to_array(doc), suffix || E'\x01') || suffix, E'\x01'));
END $$;
"""

# The keyword index keyed by person too: besides each lexeme's lexeme/tier/memory key, a row's
# keys hold one /person/memory key (8 hex digits of the md5 of its user_id, '' for none; no
# lexeme begins with '/'), so a search for one person's turns ANDs that key into every clause
# and the index gives that person's matches only. Before, a round read every match of the
# memory and dropped the other people's on the rows: a quarter of a person's memory shared by
# four read 1,702 rows to keep 447 (3.2 of a round's 4.6 ms). A key that two people's ids
# share only lets the other's rows through to that check, which stays. The old index goes in
# the same transaction; its function with it (one key function).
KEYS_BY_PERSON = r"""
CREATE FUNCTION recallery_fts_keys(memory text, person text, doc tsvector, len integer)
    RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 1000 AS $$
DECLARE
    mem text := left(md5(memory), 8);
    suffix text := '/' || width_bucket(len, ARRAY[8, 10, 13, 16, 20, 25, 32, 40, 50, 64, 80,
        100, 128, 160, 200, 256, 320, 400, 512]) || '/' || mem;
BEGIN
    IF memory IS NULL OR doc IS NULL OR len IS NULL THEN
        RETURN NULL;
    END IF;
    IF doc = ''::tsvector THEN
        RETURN doc;
    END IF;
    RETURN array_to_tsvector(string_to_array(
        array_to_string(tsvector_to_array(doc), suffix || E'') || suffix || E'/'
        || left(md5(coalesce(person, '')), 8) || '/' || mem, E''));
END $$;
CREATE INDEX entries_fts_person_keys ON entries
    USING gin (recallery_fts_keys(memory_id, user_id, fts, fts_len))
    WITH (fastupdate = on, gin_pending_list_limit = 512);
DROP INDEX entries_fts_keys;
DROP FUNCTION recallery_fts_keys(text, tsvector, integer);
ALTER INDEX entries_fts_person_keys RENAME TO entries_fts_keys;
"""

__all__ = ["DOCUMENTS_BROUGHT", "KEYS_BY_PERSON", "KEYS_IN_PLPGSQL", "WRITE_ONCE"]
