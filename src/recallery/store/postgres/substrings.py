"""The substring filter's index on PostgreSQL (migration 20), where ``pg_trgm`` is installed.

``EntryFilter.content_contains`` is ``lower(content) LIKE '%text%'`` (the one WHERE clause,
:func:`~recallery.store.filters.where_clause`). A GIN index of ``pg_trgm``'s trigrams over
``lower(content)`` answers that ``LIKE`` itself: the planner reads the entries holding every
trigram of the text and rechecks the ``LIKE`` on each, so the result is the scan's, exactly,
and it chooses the scan when the text is too short or too common for the index to help. Like
SQLite's (:mod:`recallery.store.sqlite.substrings`) it holds extracted entries only, the
Facts page's rows; a filter whose types name only extracted types lets the planner use it.

Where the extension cannot be created (not installed, or not allowed to this role) the
migration creates neither and says so in a notice: the filter scans, as it did before.
"""

from __future__ import annotations

TEXT_TRIGRAMS = """
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm unavailable (%): the text filter scans', SQLERRM;
END $$;
DO $$
DECLARE
    home text := (SELECT n.nspname FROM pg_extension x
                  JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm');
BEGIN
    IF home IS NOT NULL THEN
        EXECUTE format('CREATE INDEX entries_text_trigrams ON entries '
                       'USING gin (lower(content) %I.gin_trgm_ops) '
                       'WHERE message_type <> %L', home, 'raw');
    END IF;
END $$;
"""

__all__ = ["TEXT_TRIGRAMS"]
