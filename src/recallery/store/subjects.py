"""Reads of the data-subject listing (the web's People page): the end users, agents or
sessions of a scope, each with its counts and last activity, a page at a time in one grouped
statement. Mixed into the store's
:class:`~.reader.Reader` beside the entry reads, as accounts and jobs are.

The statement groups every entry of the scope by one id column and pages the groups, newest
activity first; the number of groups comes with each row (``count(*) OVER ()``), so a page
is one round trip. Where the backend names an index that carries every filter column
(SQLite's ``entries_filter``) the scan reads that index, never a row's text or vector."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from recallery.clock import from_epoch
from recallery.models import EntryType, Scope
from recallery.requests.subjects import Person, SubjectKind
from recallery.store.filters import EntryFilter, where_clause
from recallery.store.sql import Conn

if TYPE_CHECKING:
    from recallery.store.backend import Backend

#: The column each kind of id is stored in.
COLUMNS = {
    SubjectKind.USER: "user_id",
    SubjectKind.AGENT: "agent_id",
    SubjectKind.SESSION: "session_id",
}
_RAW = EntryType.RAW.value


def _like(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere, literally. Both sides go through the
    database's ``lower``, which folds every script on both stores (SQLite's is replaced by
    Python's: :func:`recallery.store.sqlite.connections.connect`)."""
    escaped = text.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"%{escaped}%"


class SubjectReads:
    """Mixed into :class:`~.reader.Reader`, over its connection."""

    conn: Conn
    store: Backend

    def subjects(
        self, scope: Scope, kind: SubjectKind, contains: str = "", *, limit: int, offset: int = 0
    ) -> tuple[list[Person], int]:
        """The ids of ``kind`` stored on entries of ``scope`` (an empty id is nobody's), those
        containing ``contains`` only (any case: :func:`_like`), newest activity first (then by
        id), with how many there are in all."""
        if not scope:
            return [], 0
        column = f"e.{COLUMNS[kind]}"
        where, params = where_clause(scope, EntryFilter(current_only=False))
        where += f" AND {column} <> ''"
        if contains:
            where += f" AND lower({column}) LIKE lower(?) ESCAPE '!'"
            params.append(_like(contains))
        fact = f"e.message_type <> '{_RAW}' AND e.retired_at IS NULL"
        rows = self.conn.execute(
            f"SELECT {column}, "
            f"sum(CASE WHEN {fact} THEN 1 ELSE 0 END), "
            f"sum(CASE WHEN e.message_type = '{_RAW}' THEN 1 ELSE 0 END), "
            "count(*), max(e.recorded_at), count(*) OVER () "
            f"FROM {self.store.entries_by_id} WHERE {where} "
            f"GROUP BY {column} ORDER BY max(e.recorded_at) DESC, {column} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        found = [
            Person(kind, str(i), int(facts), int(turns), int(n), _when(last))
            for i, facts, turns, n, last, _ in rows
        ]
        if rows:
            return found, int(rows[0][5])
        if offset == 0:
            return [], 0
        return found, self._groups(column, where, params)

    def _groups(self, column: str, where: str, params: list[object]) -> int:
        """How many ids there are (for a page past the last, which brings no row to tell)."""
        sql = f"SELECT count(DISTINCT {column}) FROM {self.store.entries_by_id} WHERE {where}"
        return int(self.conn.execute(sql, params)[0][0])


def _when(value: float) -> datetime:
    """A group's newest record time (never empty: a group has a row)."""
    found = from_epoch(float(value))
    assert found is not None
    return found
