"""Keyword documents of the PostgreSQL store, made in Python by the analyzer both stores share.

Each entry's ``fts`` is a ``tsvector`` of the terms :func:`recallery.text.analyzer.analyze`
gives its text, each with as many positions as it occurs (at most
:data:`~recallery.text.analyzer.MAX_TF`; the positions mean nothing else), and ``fts_len`` is
the analyzer's length. Writes bring both (:mod:`.bulk`), so the server never tokenises and its
BM25 counts the same terms as SQLite's in-process index: both stores give the same keyword
results in every language. Migration 21 (:func:`reindex`) rewrites the rows written before,
whose documents the server's English-only configuration had made; migration 24
(:func:`reindex_arabic`) those of the rows in Arabic, once Arabic was light-stemmed;
migration 28 (:func:`reindex_unspaced`) those in Thai, Lao, Myanmar, Khmer and Devanagari.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable, Sequence

import psycopg
from psycopg.adapt import Dumper
from psycopg.postgres import types
from psycopg.pq import Format

from recallery.store.sql import Row
from recallery.text import stopwords
from recallery.text.analyzer import MAX_TF, analyze_all
from recallery.text.latin import LATIN_LANGUAGES, latin_language

#: A document and its length (``fts``, ``fts_len``); the document in binary.
Document = tuple[bytes, int]
#: Rows a re-indexing step reads, analyzes and writes back at a time.
BATCH = 2_000


class TsvectorBinaryDumper(Dumper):
    """A ``tsvector`` already in binary (:func:`tsvector`), sent as it is (COPY only)."""

    format = Format.BINARY
    oid = types["tsvector"].oid

    def dump(self, obj: bytes) -> bytes:
        return obj


def register_documents(raw: psycopg.Connection[Row]) -> None:
    """Let a binary COPY take documents made by :func:`tsvector`."""
    raw.adapters.register_dumper(None, TsvectorBinaryDumper)


def tsvector(terms: Sequence[str]) -> bytes:
    """``terms`` as a ``tsvector`` in PostgreSQL's binary format (``tsvectorsend``): the
    count, then each lexeme (sorted), a zero byte, its number of positions and the positions,
    1 to its frequency."""
    counts = Counter(terms)
    out = [struct.pack("!i", len(counts))]
    for lexeme in sorted(counts, key=lambda t: t.encode()):
        n = min(counts[lexeme], MAX_TF)
        out.append(lexeme.encode() + b"\0" + struct.pack(f"!H{n}H", n, *range(1, n + 1)))
    return b"".join(out)


def documents(texts: Sequence[str]) -> list[Document]:
    """The keyword document and length of each of ``texts``."""
    return [(tsvector(d.terms), d.length) for d in analyze_all(texts)]


#: Before migration 21 the row trigger tokenised a text that came without its document: now
#: every writer brings it, and a row without one (or whose text changed without it) is refused.
BROUGHT_ONLY = """
CREATE OR REPLACE FUNCTION recallery_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.fts IS NULL OR NEW.fts_len IS NULL OR (TG_OP = 'UPDATE'
            AND NEW.content IS DISTINCT FROM OLD.content AND NEW.fts IS NOT DISTINCT FROM OLD.fts)
    THEN
        RAISE EXCEPTION 'entries.fts and fts_len come with the row, from the keyword analyzer '
            '(recallery.text.analyzer); a text is never changed in place';
    END IF;
    RETURN NEW;
END $$;
"""
_RECOUNT = """
DELETE FROM fts_terms;
DELETE FROM fts_docs;
INSERT INTO fts_terms (tenant_id, memory_id, term, df, max_tf, min_len, max_len)
    SELECT e.tenant_id, e.memory_id, u.lexeme, count(*), max(cardinality(u.positions)),
           min(e.fts_len), max(e.fts_len)
    FROM entries e CROSS JOIN LATERAL unnest(e.fts) u GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
INSERT INTO fts_docs (tenant_id, memory_id, docs, tokens)
    SELECT tenant_id, memory_id, count(*), sum(fts_len) FROM entries GROUP BY 1, 2 ORDER BY 1, 2;
"""


def reindex(
    raw: psycopg.Connection[Row], only: str = "TRUE", keep: Callable[[str], bool] | None = None
) -> None:
    """Migration 21: every row's document and length made again by the analyzer, in batches
    by message id, then the term and document counts recounted from them (in the migration's
    transaction: a failure leaves every row as it was). ``only``: a condition on ``content``
    limiting it to the rows whose terms changed (a fixed SQL text, never a caller's);
    ``keep``: of those, the texts whose terms changed, where SQL cannot tell."""
    register_documents(raw)
    raw.execute(BROUGHT_ONLY)
    raw.execute(
        "CREATE TEMP TABLE recallery_reindexed (message_id int8, fts tsvector, fts_len int4) "
        "ON COMMIT DROP"
    )
    last = -1
    while True:
        rows = raw.execute(
            f"SELECT message_id, content FROM entries WHERE message_id > %s AND ({only}) "
            "ORDER BY message_id LIMIT %s",
            [last, BATCH],
        ).fetchall()
        if not rows:
            break
        last = int(rows[-1][0])
        if keep is not None:
            rows = [r for r in rows if keep(str(r[1]))]
        made = documents([str(r[1]) for r in rows])
        with raw.cursor().copy("COPY recallery_reindexed FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "tsvector", "int4"])
            for (mid, _), (doc, length) in zip(rows, made, strict=True):
                copy.write_row([mid, doc, length])
        raw.execute(
            "UPDATE entries e SET fts = r.fts, fts_len = r.fts_len FROM recallery_reindexed r "
            "WHERE e.message_id = r.message_id"
        )
        raw.execute("TRUNCATE recallery_reindexed")
    raw.execute(_RECOUNT)


def reindex_arabic(raw: psycopg.Connection[Row]) -> None:
    """Migration 24: the documents of the rows holding Arabic letters, whose words are now
    light-stemmed (:mod:`recallery.text.arabic`); other rows' terms did not change."""
    reindex(raw, "content ~ '[\u0621-\u064a]'")


def reindex_unspaced(raw: psycopg.Connection[Row]) -> None:
    """Migration 28: the documents of the rows holding Thai, Lao, Myanmar or Khmer letters,
    now bigrammed by letter (a whole run had been one term), or Devanagari, now stemmed with
    the Hindi stemmer and its stop words left out; other rows' terms did not change."""
    reindex(raw, "content ~ '[\u0e01-\u0edf\u1000-\u109f\u1780-\u17ff\u0900-\u097f]'")


#: The Latin-script languages the analyzer told apart from migration 31 on: all but the first.
LATER_LATIN = LATIN_LANGUAGES - stopwords.FIRST_LATIN


def reindex_latin(raw: psycopg.Connection[Row]) -> None:
    """Migration 31: the documents of the rows the analyzer now reads in one of the
    Latin-script languages it tells apart since (:data:`LATER_LATIN`). Those languages only
    add rivals, which win a vote only outright (they come last in the order), so every other
    row is read in the language it was read in before and its terms did not change."""
    reindex(raw, "content ~ '[A-Za-z]'", lambda text: latin_language(text) in LATER_LATIN)


__all__ = [
    "BROUGHT_ONLY",
    "Document",
    "TsvectorBinaryDumper",
    "documents",
    "register_documents",
    "reindex",
    "reindex_arabic",
    "reindex_latin",
    "reindex_unspaced",
    "tsvector",
]
