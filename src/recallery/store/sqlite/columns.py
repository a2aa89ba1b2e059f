"""Every entry's filter columns in memory, so a search checks its candidates without SQL.

Per memory, in message-id order like the other in-process indexes: type, user, agent,
session and trust as small integer codes, enabled, and the five times (valid, invalid,
recorded, retired, forgotten; NULL as +inf, which compares as SQL's ``IS NULL OR x > t``
does). :meth:`FilterColumns.passing` evaluates an :class:`EntryFilter` over candidate ids
with numpy and answers exactly what :func:`~recallery.store.filters.where_clause` selects;
a filter that sets a field outside :data:`HELD` (a session substring, source ids, extracted
types, or any field added later) gets no answer, and the caller checks in SQL.

Unlike text and vectors, these columns change after a row is written (disable, review,
retire, forget, erase). The store reads which rows changed from its change log (a trigger
writes the id of every changed or deleted entry) and hands them to :meth:`refresh`, so a
change made by any process counts from this process's next search on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
from numpy.typing import NDArray

from recallery.clock import to_epoch
from recallery.models import Trust
from recallery.store.filters import EntryFilter
from recallery.store.sqlite.arrays import grown, located
from recallery.store.sqlite.catchup import Load, catch_up
from recallery.store.sqlite.snapshots import Arrays, strings, texts

#: The entry columns read for each row, in :data:`Row` order.
COLUMNS = (
    "message_id, memory_id, message_type, user_id, agent_id, session_id, trust, status, "
    "valid_at, invalid_at, recorded_at, retired_at, forget_at"
)
Row = tuple[
    int, str, str, str, str, str, str, int, float, float | None, float, float | None, float | None
]
#: Code columns: type, user, agent, session, trust (row fields 2-6).
TYPE, USER, AGENT, SESSION, TRUST = range(5)
#: Time columns (row fields 8-12).
VALID, INVALID, RECORDED, RETIRED, FORGET = range(5)
_NEVER = float("inf")
#: The :class:`EntryFilter` fields these columns evaluate. A filter that sets any other field
#: (a new one included) gets no answer here and is checked in SQL, so a field added to the
#: filter is never silently ignored by search; tests hold this list to every field.
HELD = frozenset(
    {
        "types",
        "user_id",
        "agent_ids",
        "session_id",
        "message_ids",
        "enabled_only",
        "disabled_only",
        "hide_forgotten",
        "forgotten_only",
        "hide_rejected",
        "trust",
        "current_only",
        "valid_on",
        "as_of",
        "recorded_since",
        "recorded_before",
    }
)
_DEFAULTS = {f.name: f.default for f in fields(EntryFilter)}


def unheld(f: EntryFilter) -> list[str]:
    """The fields ``f`` sets that these columns do not evaluate."""
    return [n for n, d in _DEFAULTS.items() if n not in HELD and getattr(f, n) != d]


@dataclass
class _Block:
    """One memory's rows; ``alive`` turns False when a row is erased."""

    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    codes: NDArray[np.int32] = field(default_factory=lambda: np.empty((0, 5), np.int32))
    times: NDArray[np.float64] = field(default_factory=lambda: np.empty((0, 5), np.float64))
    enabled: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    size: int = 0

    def append(self, ids: NDArray[np.int64], codes: NDArray[np.int32], times: NDArray[np.float64],
               enabled: NDArray[np.bool_]) -> None:  # fmt: skip
        need = self.size + len(ids)
        self.ids, self.codes, self.times = (
            grown(self.ids, need),
            grown(self.codes, need),
            grown(self.times, need),
        )
        self.enabled, self.alive = grown(self.enabled, need), grown(self.alive, need)
        span = slice(self.size, need)
        self.ids[span], self.codes[span], self.times[span] = ids, codes, times
        self.enabled[span], self.alive[span] = enabled, True
        self.size = need

    def positions(self, ids: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(positions, ids) of those of the sorted ``ids`` held here, alive or not."""
        return located(self.ids[: self.size], ids)


@dataclass(frozen=True)
class HeldCheck:
    """A search's filter check from the columns: as a :data:`~recallery.store.queries.Passing`
    (the set of ids that pass) or, for ranking code that holds ids in arrays, as a mask."""

    columns: FilterColumns
    memories: list[str]
    f: EntryFilter

    def __call__(self, ids: Iterable[int]) -> set[int]:
        wanted = np.fromiter(ids, np.int64)
        return set(wanted[self.mask(wanted)].tolist())

    def mask(self, ids: NDArray[np.int64]) -> NDArray[np.bool_]:
        return self.columns.mask(self.memories, ids, self.f)


class FilterColumns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: dict[str, _Block] = {}
        self._codes: dict[str, int] = {}
        self._names: list[str] = []
        self._high = 0

    def _code(self, value: str) -> int:
        """``value``'s code, a new one where it has none yet."""
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._names)
            self._names.append(value)
        return code

    def sync(self, load_after: Load[Row]) -> None:
        """Add every row with a message id above the high-water mark."""
        with self._lock:
            self._high, _ = catch_up(load_after, self._high, self._append)

    def _append(self, memory_id: str, rows: list[Row]) -> None:
        ids, codes, times, enabled = self._columns(rows)
        self._blocks.setdefault(memory_id, _Block()).append(ids, codes, times, enabled)

    def _columns(
        self, rows: Sequence[Row]
    ) -> tuple[NDArray[np.int64], NDArray[np.int32], NDArray[np.float64], NDArray[np.bool_]]:
        code = self._code
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        codes = np.asarray([[code(str(r[c])) for c in range(2, 7)] for r in rows], np.int32)
        codes = codes.reshape(len(rows), 5)
        times = np.asarray(
            [[_NEVER if r[c] is None else r[c] for c in range(8, 13)] for r in rows], np.float64
        ).reshape(len(rows), 5)
        enabled = np.fromiter((r[7] == 1 for r in rows), np.bool_, len(rows))
        return ids, codes, times, enabled

    def snapshot(self) -> dict[str, Arrays]:
        """Every block's live rows, its codes as its own strings."""
        with self._lock:
            names = np.asarray(self._names, dtype=object)
            out: dict[str, Arrays] = {}
            for m, b in self._blocks.items():
                n, keep = b.size, b.alive[: b.size]
                used, local = np.unique(b.codes[:n][keep], return_inverse=True)
                out[m] = {"ids": b.ids[:n][keep], "names": texts(names[used]),
                          "codes": local.reshape(-1, 5).astype(np.int32),
                          "times": b.times[:n][keep], "enabled": b.enabled[:n][keep]}  # fmt: skip
            return out

    def restore(self, states: dict[str, Arrays], high: int, load_others: Load[Row]) -> None:
        """As :meth:`~.keywords.KeywordIndex.restore`."""
        with self._lock:
            for m, a in states.items():
                known = np.asarray([self._code(x) for x in strings(a["names"])])
                codes = known.astype(np.int32)[a["codes"]].reshape(-1, 5)
                alive = np.ones(len(a["ids"]), np.bool_)
                self._blocks[m] = _Block(a["ids"], codes, a["times"], a["enabled"], alive,
                                         len(a["ids"]))  # fmt: skip
            catch_up(load_others, 0, self._append)
            self._high = high

    def refresh(self, rows: Sequence[Row], gone: Iterable[int]) -> None:
        """Rows as they are now (those not held yet are left for :meth:`sync`), and the ids
        of rows erased."""
        with self._lock:
            by_memory: dict[str, list[Row]] = {}
            for row in rows:
                by_memory.setdefault(row[1], []).append(row)
            for memory_id, changed in by_memory.items():
                block = self._blocks.get(memory_id)
                if block is None:
                    continue
                ids, codes, times, enabled = self._columns(changed)
                order = np.argsort(ids)
                at, found = block.positions(ids[order])
                keep = order[np.isin(ids[order], found)]
                block.codes[at], block.times[at], block.enabled[at] = (
                    codes[keep], times[keep], enabled[keep]
                )  # fmt: skip
            wanted = np.unique(np.fromiter(gone, np.int64))
            for block in self._blocks.values():
                block.alive[block.positions(wanted)[0]] = False

    def passing(self, memory_ids: Iterable[str], f: EntryFilter) -> HeldCheck | None:
        """The check of ``f`` over the memories' candidates; None where ``f`` sets a field
        not in :data:`HELD`."""
        if unheld(f):
            return None
        return HeldCheck(self, sorted(set(memory_ids)), f)

    def valid_times(
        self, memory_ids: Iterable[str], ids: Iterable[int]
    ) -> list[tuple[int, float, str, str]]:
        """(id, valid time, memory, end user) of those of ``ids`` that are rows of the
        memories, in any state, with a valid time."""
        wanted = np.unique(np.fromiter(ids, np.int64))
        out: list[tuple[int, float, str, str]] = []
        with self._lock:
            for m in memory_ids:
                block = self._blocks.get(m)
                if block is None or not block.size or not len(wanted):
                    continue
                at, found = block.positions(wanted)
                keep = block.alive[at] & (block.times[at, VALID] != _NEVER)
                at, found = at[keep], found[keep]
                users = [self._names[u] for u in block.codes[at, USER].tolist()]
                times = block.times[at, VALID].tolist()
                out += zip(found.tolist(), times, [m] * len(users), users, strict=True)
        return out

    def mask(
        self, memory_ids: Sequence[str], ids: NDArray[np.int64], f: EntryFilter
    ) -> NDArray[np.bool_]:
        """Which of ``ids`` (any order) are rows of the memories that pass ``f``."""
        out = np.zeros(len(ids), np.bool_)
        with self._lock:
            for block in (self._blocks.get(m) for m in memory_ids):
                if block is None or not block.size or not len(ids):
                    continue
                held = block.ids[: block.size]
                at = np.minimum(np.searchsorted(held, ids), block.size - 1)
                hit = np.flatnonzero(held[at] == ids)
                out[hit] = self._mask(block, at[hit], ids[hit], f)
        return out

    def _mask(
        self, b: _Block, at: NDArray[np.int64], ids: NDArray[np.int64], f: EntryFilter
    ) -> NDArray[np.bool_]:
        """Which rows ``at`` pass ``f``, term by term as
        :func:`~recallery.store.filters.where_clause` writes them."""
        codes, times = b.codes[at], b.times[at]
        keep = b.alive[at] & self._identity(codes, ids, f)
        keep &= self._state(codes, b.enabled[at], f)
        return keep & _times(times, f)

    def _among(
        self, codes: NDArray[np.int32], column: int, values: Iterable[str]
    ) -> NDArray[np.bool_]:
        wanted = [self._codes[v] for v in values if v in self._codes]
        if len(wanted) == 1:
            same: NDArray[np.bool_] = codes[:, column] == wanted[0]
            return same
        return np.isin(codes[:, column], np.asarray(wanted, np.int32))

    def _identity(
        self, codes: NDArray[np.int32], ids: NDArray[np.int64], f: EntryFilter
    ) -> NDArray[np.bool_]:
        keep = np.ones(len(ids), np.bool_)
        if f.types is not None:
            keep &= self._among(codes, TYPE, (t.value for t in f.types))
        if f.user_id is not None:
            keep &= self._among(codes, USER, [f.user_id])
        if f.agent_ids is not None:
            keep &= self._among(codes, AGENT, f.agent_ids)
        if f.session_id is not None:
            keep &= self._among(codes, SESSION, [f.session_id])
        if f.message_ids is not None:
            keep &= np.isin(ids, np.fromiter(f.message_ids, np.int64))
        return keep

    def _state(
        self, codes: NDArray[np.int32], enabled: NDArray[np.bool_], f: EntryFilter
    ) -> NDArray[np.bool_]:
        keep = np.ones(len(enabled), np.bool_)
        if f.enabled_only:
            keep &= enabled
        if f.disabled_only:
            keep &= ~enabled
        if f.hide_rejected:
            keep &= codes[:, TRUST] != self._codes.get(Trust.REJECTED.value, -1)
        if f.trust is not None:
            keep &= self._among(codes, TRUST, (t.value for t in f.trust))
        return keep


def _times(times: NDArray[np.float64], f: EntryFilter) -> NDArray[np.bool_]:
    keep = np.ones(len(times), np.bool_)
    if f.as_of is None:
        if f.current_only:
            keep &= times[:, RETIRED] == _NEVER
        if f.hide_forgotten:
            keep &= times[:, FORGET] == _NEVER
    else:
        t = to_epoch(f.as_of)
        keep &= times[:, RECORDED] <= t
        if f.current_only:
            keep &= times[:, RETIRED] > t
        if f.hide_forgotten:
            keep &= times[:, FORGET] > t
    if f.forgotten_only:
        keep &= times[:, FORGET] != _NEVER
    if f.recorded_since is not None:
        keep &= times[:, RECORDED] >= to_epoch(f.recorded_since)
    if f.recorded_before is not None:
        keep &= times[:, RECORDED] < to_epoch(f.recorded_before)
    if f.valid_on is not None:
        v = to_epoch(f.valid_on)
        keep &= (times[:, VALID] <= v) & (times[:, INVALID] > v)
    return keep
