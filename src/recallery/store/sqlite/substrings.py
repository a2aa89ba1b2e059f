"""A substring filter read from an index first: which extracted entries may hold the text.

``EntryFilter.content_contains`` means a substring of the entry's text, any case (the
:func:`~recallery.store.filters.where_clause` ``LIKE``). Checked alone it reads the text of
every entry of the memory, about 90 ms at 100,000 entries. The FTS5 table ``entries_text``
(migration 13: the trigram tokenizer, rowids only, kept by triggers) indexes the text of every
extracted entry, never a raw turn's. An entry whose text holds the substring holds each of its
three-character pieces (case folded as the tokenizer folds it, which is at least what
``LIKE`` folds), so the entries holding all the pieces are a superset of those that pass;
:func:`narrowed` names them as the filter's message ids and the ``LIKE`` still decides.

The index cannot answer a text under three characters, nor a filter that admits raw turns:
the filter is then left as it is (the scan). Nor is it worth reading when the pieces are
common: past :data:`CANDIDATES` entries a scan in valid-time order finds a page sooner than
looking the candidates up one by one, so the filter is left as it is too.

Erasure: deleting an entry's row deletes its pieces from the index (a trigger); the
deletion is a marker until the index's segments are merged, so :func:`merge` (from the
store's ``scrub``) merges them all, and ``secure_delete`` zeroes the pages they leave.
"""

from __future__ import annotations

from dataclasses import replace

from recallery.models import EntryType
from recallery.store.filters import EntryFilter
from recallery.store.sql import Conn

#: Most candidates the index may name for the filter to use them (see the module's text).
CANDIDATES = 10_000
#: A trigram: the shortest text the index answers.
PIECE = 3


def narrowed(conn: Conn, f: EntryFilter) -> EntryFilter:
    """``f`` with the ids of the entries that may hold its substring, where the index can say
    and they are few; else ``f`` unchanged. The same entries pass either way."""
    text = (f.content_contains or "").lower()  # as where_clause lowers it
    if len(text) < PIECE or f.types is None or EntryType.RAW in f.types:
        return f
    pieces = sorted({text[i : i + PIECE] for i in range(len(text) - PIECE + 1)})
    query = " AND ".join('"' + p.replace('"', '""') + '"' for p in pieces)
    rows = conn.execute(
        "SELECT rowid FROM entries_text WHERE entries_text MATCH ? LIMIT ?",
        [query, CANDIDATES + 1],
    )
    if len(rows) > CANDIDATES:
        return f
    ids = frozenset(int(r[0]) for r in rows)
    return replace(f, message_ids=ids if f.message_ids is None else ids & f.message_ids)


def merge(conn: Conn) -> None:
    """Merge the index's segments into one, leaving out deleted entries' pieces."""
    conn.execute("INSERT INTO entries_text (entries_text) VALUES ('optimize')")
