"""The postings of one keyword block (:mod:`.keywords`): for each stem, the documents (block
positions, ascending) that hold it and its frequency in each.

A stem indexed in this process grows its own pair of arrays. Stems restored from a snapshot
(:mod:`.snapshots`) stay in the snapshot's flat arrays (the stems' text, row bounds, documents,
frequencies), found by hash, until a new document holds them: text is full of words seen once
(names, numbers), and a million of them then cost 16 bytes each, not a dict entry and two
arrays.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.store.sqlite.arrays import grown
from recallery.store.sqlite.snapshots import Arrays

View = tuple[NDArray[np.int32], NDArray[Any]]
Flat = tuple[
    NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64], NDArray[np.int32], NDArray[Any]
]
"""Stems' text and its bounds, each stem's bounds in the documents, documents, frequencies."""


@dataclass
class _Grown:
    """Documents holding one stem, with its frequency in each."""

    docs: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    tfs: NDArray[np.float32] = field(default_factory=lambda: np.empty(0, np.float32))
    size: int = 0

    def extend(self, docs: NDArray[Any], tfs: NDArray[Any]) -> None:
        need = self.size + len(docs)
        self.docs, self.tfs = grown(self.docs, need), grown(self.tfs, need)
        self.docs[self.size : need] = docs
        self.tfs[self.size : need] = tfs
        self.size = need

    def view(self) -> View:
        return self.docs[: self.size], self.tfs[: self.size]


class Postings:
    def __init__(self) -> None:
        self._grown: dict[str, _Grown] = {}
        # the snapshot's stems: utf-8 one after another, and their bounds in that text
        self._text, self._text_bounds = np.empty(0, np.uint8), np.zeros(1, np.int64)
        # its stems' hashes in order, with each one's row; each row's postings
        self._hashes, self._rows = np.empty(0, np.int64), np.empty(0, np.int64)
        self._bounds: NDArray[np.int64] = np.zeros(1, np.int64)
        self._docs: NDArray[np.int32] = np.empty(0, np.int32)
        self._tfs: NDArray[Any] = np.empty(0, np.float32)

    def get(self, stem: str) -> View | None:
        """Documents holding ``stem`` and its frequency in each; None where none does."""
        held = self._grown.get(stem)
        if held is not None:
            return held.view()
        row = self._frozen(stem)
        return None if row is None else self._row(row)

    def _frozen(self, stem: str) -> int | None:
        """The snapshot's row of ``stem`` (None: not there)."""
        h = hash(stem)
        at = int(np.searchsorted(self._hashes, h))
        while at < len(self._hashes) and self._hashes[at] == h:
            row = int(self._rows[at])
            if self._stem(row) == stem:
                return row
            at += 1
        return None

    def _stem(self, row: int) -> str:
        lo, hi = int(self._text_bounds[row]), int(self._text_bounds[row + 1])
        return self._text[lo:hi].tobytes().decode()

    def _row(self, row: int) -> View:
        lo, hi = int(self._bounds[row]), int(self._bounds[row + 1])
        return self._docs[lo:hi], self._tfs[lo:hi]

    def extend(self, stem: str, docs: NDArray[np.int64], tfs: NDArray[np.int64]) -> None:
        """Add documents (above any held) to ``stem``'s postings."""
        held = self._grown.get(stem)
        if held is None:
            held = self._grown[stem] = _Grown()
            row = self._frozen(stem)
            if row is not None:  # from now on its grown postings count, not the row
                held.extend(*self._row(row))
        held.extend(docs, tfs)

    def state(self, keep: NDArray[np.bool_] | None = None) -> Arrays:
        """Every stem's postings as flat arrays, for a snapshot; with ``keep``, of the
        documents it marks only, renumbered, and without the stems none of them holds."""
        flat = self._flat()
        if keep is not None:
            flat = _kept(*flat, keep)
        text, text_bounds, bounds, docs, tfs = flat
        small = tfs.max(initial=0) < 256  # frequencies are counts: a byte each mostly does
        return {"stems": text, "stem_bounds": text_bounds, "bounds": bounds, "docs": docs,
                "tfs": tfs.astype(np.uint8) if small else tfs}  # fmt: skip

    def _flat(self) -> Flat:
        if not self._grown:
            return self._text, self._text_bounds, self._bounds, self._docs, self._tfs
        frozen = [self._stem(row) for row in range(len(self._bounds) - 1)]
        kept = [row for row, stem in enumerate(frozen) if stem not in self._grown]
        views = [self._row(row) for row in kept] + [p.view() for p in self._grown.values()]
        words = [frozen[row].encode() for row in kept] + [s.encode() for s in self._grown]
        return (
            np.frombuffer(b"".join(words), np.uint8),
            np.cumsum([0, *(len(w) for w in words)], dtype=np.int64),
            np.cumsum([0, *(len(d) for d, _ in views)], dtype=np.int64),
            np.concatenate([d for d, _ in views] or [np.empty(0, np.int32)]),
            np.concatenate([t for _, t in views] or [np.empty(0, np.float32)]),
        )

    @classmethod
    def restored(cls, a: Arrays) -> Postings:
        out = cls()
        out._text, out._text_bounds = a["stems"], a["stem_bounds"]
        text, bounds = a["stems"].tobytes(), a["stem_bounds"].tolist()
        hashes = np.fromiter(
            (hash(text[lo:hi].decode()) for lo, hi in itertools.pairwise(bounds)),
            np.int64,
            len(bounds) - 1,
        )
        out._rows = np.argsort(hashes, kind="stable")
        out._hashes = hashes[out._rows]
        out._bounds, out._docs, out._tfs = a["bounds"], a["docs"], a["tfs"]
        return out


def _kept(
    text: NDArray[np.uint8],
    text_bounds: NDArray[np.int64],
    bounds: NDArray[np.int64],
    docs: NDArray[np.int32],
    tfs: NDArray[Any],
    keep: NDArray[np.bool_],
) -> Flat:
    """Flat postings of the documents ``keep`` marks, renumbered; a stem that none of them
    holds goes, its text with it."""
    rows = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    ok = keep[docs]
    docs, tfs, rows = (np.cumsum(keep) - 1)[docs[ok]].astype(np.int32), tfs[ok], rows[ok]
    counts = np.bincount(rows, minlength=len(bounds) - 1)
    held, sizes = counts > 0, np.diff(text_bounds)
    return (
        text[np.repeat(held, sizes)],
        np.cumsum(np.concatenate([[0], sizes[held]]), dtype=np.int64),
        np.cumsum(np.concatenate([[0], counts[held]]), dtype=np.int64),
        docs,
        tfs,
    )
