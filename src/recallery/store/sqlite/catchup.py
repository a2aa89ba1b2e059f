"""Catching an in-process index up with the file: the loop the keyword, vector and
conversation indexes share.

Rows never change once written, and SQLite commits message ids in order, so everything
committed since an index last looked lies above its high-water mark. The store reads those
rows a bounded chunk per statement (a first load of a million rows never holds them all as
Python objects at once); the loop asks again until nothing is left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

#: Rows the store reads per statement while an index catches up.
LOAD_CHUNK = 20_000

R = TypeVar("R", bound=tuple[Any, ...])
Load = Callable[[int], Sequence[R]]
"""Rows (message_id, memory_id, ...) above the mark, by id, at most a chunk; empty when none."""


def catch_up(load: Load[R], high: int, add: Callable[[str, list[R]], None]) -> tuple[int, set[str]]:
    """Hand every row above ``high`` to ``add``, grouped by memory in id order; returns the new
    mark and the memories that got rows."""
    touched: set[str] = set()
    while rows := load(high):
        by_memory: dict[str, list[R]] = {}
        for row in rows:
            by_memory.setdefault(row[1], []).append(row)
        for memory_id, items in by_memory.items():
            add(memory_id, items)
        high = max(high, rows[-1][0])
        touched |= by_memory.keys()
    return high, touched
