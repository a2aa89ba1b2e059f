"""The base's portable SQL on psycopg: ``?`` placeholders become ``%s``, errors StoreError.

Only a ``?`` outside string literals, quoted identifiers, dollar quotes and comments is a
placeholder. psycopg reads ``%`` everywhere in a query that has parameters, so every literal
``%`` is doubled, inside literals too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import psycopg

from recallery.errors import StoreError
from recallery.store.sql import Row


def _skip_quoted(sql: str, start: int, quote: str) -> int:
    """Index just past the literal or identifier opened at ``start`` (doubled quotes stay in)."""
    i = start + 1
    while i < len(sql):
        if sql[i] == quote:
            if i + 1 < len(sql) and sql[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return len(sql)


def _skip_dollar(sql: str, start: int) -> int:
    """Index just past a ``$tag$ ... $tag$`` string, or ``start + 1`` when ``$`` opens none."""
    end = sql.find("$", start + 1)
    tag = sql[start : end + 1] if end > 0 else ""
    if not tag or not all(c.isalnum() or c == "_" for c in tag[1:-1]) or tag[1:2].isdigit():
        return start + 1
    close = sql.find(tag, end + 1)
    return len(sql) if close < 0 else close + len(tag)


def _skip_comment(sql: str, start: int) -> int:
    if sql.startswith("--", start):
        end = sql.find("\n", start)
        return len(sql) if end < 0 else end + 1
    end = sql.find("*/", start + 2)
    return len(sql) if end < 0 else end + 2


def _skip(sql: str, i: int) -> int:
    """Where the quoted part or comment at ``i`` ends; ``i`` itself when there is none."""
    c = sql[i]
    if c in "'\"":
        return _skip_quoted(sql, i, c)
    if c == "$" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
        return _skip_dollar(sql, i)
    if sql.startswith(("--", "/*"), i):
        return _skip_comment(sql, i)
    return i


@lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """``sql`` with ``?`` placeholders as psycopg's ``%s`` and literal ``%`` doubled."""
    out: list[str] = []
    i = 0
    while i < len(sql):
        end = _skip(sql, i)
        if end > i:
            out.append(sql[i:end].replace("%", "%%"))
            i = end
            continue
        c = sql[i]
        out.append("%s" if c == "?" else "%%" if c == "%" else c)
        i += 1
    return "".join(out)


class PgConn:
    """Adapts a psycopg connection (inside a transaction) to the store's ``Conn`` protocol."""

    def __init__(self, raw: psycopg.Connection[Row]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            cur = self.raw.execute(translate(sql), list(params))
            return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc

    def execute_planned(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """As :meth:`execute`, planned for these values each time: never prepared, so
        PostgreSQL never settles on one generic plan for every value (psycopg prepares a
        statement run five times)."""
        try:
            cur = self.raw.execute(translate(sql), list(params), prepare=False)
            return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc

    def execute_binary(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """As :meth:`execute`, with results in binary (vectors without text parsing)."""
        try:
            with self.raw.cursor(binary=True) as cur:
                cur.execute(translate(sql), list(params))
                return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc

    def copy_rows(
        self,
        table: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[object]],
        types: Sequence[str] | None = None,
    ) -> None:
        """``COPY table (columns) FROM STDIN``: one statement (its statement-level triggers
        fire once). With ``types``, in binary (no text formatting of vectors); without, in
        text, the column types being the table's."""
        binary = " (FORMAT BINARY)" if types is not None else ""
        try:
            with (
                self.raw.cursor() as cur,
                cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN{binary}") as copy,
            ):
                if types is not None:
                    copy.set_types(list(types))
                for row in rows:
                    copy.write_row(row)
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc

    def copy_binary(self, table: str, data: bytes) -> None:
        """``COPY table FROM STDIN`` of ``data``, rows in PostgreSQL's binary COPY format (as
        a ``COPY ... TO STDOUT (FORMAT BINARY)`` sent them)."""
        try:
            with (
                self.raw.cursor() as cur,
                cur.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as c,
            ):
                c.write(data)
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        try:
            with self.raw.cursor() as cur:
                cur.executemany(translate(sql), [list(r) for r in rows])
        except psycopg.Error as exc:
            raise StoreError(f"postgres: {exc}") from exc
