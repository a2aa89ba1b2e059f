"""What every store module needs to run portable SQL: the connection protocol, placeholders
and chunks.

Statements are written once, with ``?`` placeholders, and run unchanged on every backend; a
backend adapts its driver to :class:`Conn`. Long id lists go in chunks so ``IN (...)`` lists
stay within every backend's limits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

Row = tuple[Any, ...]
T = TypeVar("T")


class Conn(Protocol):
    """The little a backend connection must do: run SQL with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None: ...


def marks(n: int) -> str:
    """``n`` comma-separated placeholders, for an ``IN (...)`` list or a ``VALUES`` row."""
    return ",".join("?" * n)


def chunks(items: Sequence[T], size: int) -> Iterator[list[T]]:
    """``items`` in consecutive lists of at most ``size``."""
    for i in range(0, len(items), size):
        yield list(items[i : i + size])
