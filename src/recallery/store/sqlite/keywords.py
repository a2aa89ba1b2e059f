"""An in-process BM25 index of the stored text, one block per memory, for keyword search.

FTS5's ``bm25()`` counts the documents of the whole file, so one memory's words would shift
another's ranking; scoring with each memory's own statistics through FTS5 takes a count and a
ranked pass per query term, about 40 ms a query at 100k entries. Here each memory keeps its
postings (document number and term frequency per stem) in growable numpy arrays, and a query
scores the postings of its few terms in a handful of array operations: well under a
millisecond at 100k.

BM25 is FTS5's: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), k1 = 1.2, b = 0.75,
with N, n and the average length of the memories searched, counting entries in any state
(as the PostgreSQL store does); terms and lengths are the keyword analyzer's
(:mod:`recallery.text.analyzer`, which the PostgreSQL store indexes too), so English scores
equal FTS5's ``porter unicode61 remove_diacritics 2`` exactly where its stemmer and
Snowball's agree. A query word whose stem is a stop word ("one": "on") does not match the
stop word itself.

Raw turns can also be scored through their conversation windows (:mod:`.windows`): a turn
together with the turns it answers, with the windows' own statistics.

Text never changes once written (a correction is a new entry), so the index, like the vector
cache, can only be behind: :meth:`KeywordIndex.sync` reads rows committed since its last
look. Erasure marks rows dead at once and takes them out of their conversations' windows; their
terms stay in memory, matching nothing, and a snapshot (:mod:`.snapshots`) leaves them out.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from recallery.store.sqlite.arrays import grown, located
from recallery.store.sqlite.catchup import Load, catch_up
from recallery.store.sqlite.postings import Postings
from recallery.store.sqlite.snapshots import Arrays
from recallery.store.sqlite.windows import Links, Scratch
from recallery.text.analyzer import MAX_TF, analyze_all, query_terms

K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a term in more than half of the documents.
MIN_IDF = 1e-6
Row = tuple[int, str, str, str | None]
"""(message_id, memory_id, content, conversation) of an entry; the conversation (user, agent
and session) only for a raw turn, None otherwise."""
Loader = Load[Row]
Scores = tuple[NDArray[np.int64], NDArray[np.float64]]
"""Block positions or message ids, and a score or frequency for each."""


@dataclass
class _Block:
    """One memory's documents in message-id order, its postings and conversation windows."""

    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    lengths: NDArray[np.float64] = field(default_factory=lambda: np.empty(0, np.float64))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    size: int = 0
    live: int = 0
    live_length: float = 0.0
    live_windows: float = 0.0
    """Word count of the live documents' windows, summed."""
    window_lengths: NDArray[np.float64] = field(default_factory=lambda: np.empty(0, np.float64))
    """Word count of each document's window."""
    postings: Postings = field(default_factory=Postings)
    links: Links = field(default_factory=Links)
    scratch: Scratch = field(default_factory=Scratch)

    def append(self, rows: Sequence[Row]) -> None:
        """Index ``rows``, ids above any already here: the (stem,
        document) pairs of the whole batch are counted with one sort, not word by word."""
        start, need = self.size, self.size + len(rows)
        self.ids, self.lengths = grown(self.ids, need), grown(self.lengths, need)
        self.alive = grown(self.alive, need)
        documents = analyze_all([row[2] for row in rows])
        self.ids[start:need] = [row[0] for row in rows]
        self.lengths[start:need] = [d.length for d in documents]
        self.alive[start:need] = True
        self.live_length += sum(d.length for d in documents)
        self.size, self.live = need, self.live + len(rows)
        self.links.append(start, [row[3] for row in rows])
        added = np.arange(start, need, dtype=np.int64)
        self.links.measure(added, self.lengths)
        self.window_lengths = grown(self.window_lengths, need)
        self._count_windows(added)
        names = list({t for d in documents for t in d.terms})
        number = {name: i for i, name in enumerate(names)}
        term = np.fromiter((number[t] for d in documents for t in d.terms), np.int64)
        per_doc = np.fromiter((len(d.terms) for d in documents), np.int64, len(rows))
        doc = np.repeat(np.arange(start, need, dtype=np.int64), per_doc)
        pairs, tfs = np.unique(term * need + doc, return_counts=True)
        tfs = np.minimum(tfs, MAX_TF)  # as PostgreSQL's tsvector counts
        terms, docs = pairs // need, pairs % need
        bounds = [0, *(np.flatnonzero(np.diff(terms)) + 1).tolist(), len(pairs)]
        for lo, hi in itertools.pairwise(bounds):
            if hi > lo:
                self.postings.extend(names[int(terms[lo])], docs[lo:hi], tfs[lo:hi])

    def positions(self, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Block positions of those of the sorted ``ids`` held here, alive or not."""
        return located(self.ids[: self.size], ids)[0]

    def drop(self, ids: NDArray[np.int64]) -> None:
        at = self.positions(ids)
        at = at[self.alive[at]]
        for p in at.tolist():  # the windows after it change: measure and count them again
            later = np.asarray(self.links.later(p), dtype=np.int64)
            self.live_windows -= float(self.window_lengths[p] + self.window_lengths[later].sum())
            self.links.unlink(p)
            self.window_lengths[p] = 0.0
            self.links.measure(later, self.lengths)
            self._count_windows(later)
        self.alive[at] = False
        self.live -= len(at)
        self.live_length -= float(self.lengths[at].sum())

    def _count_windows(self, at: NDArray[np.int64]) -> None:
        lengths = self.links.window_lengths(at, self.lengths)
        self.window_lengths[at] = lengths
        self.live_windows += float(lengths.sum())

    def postings_of(self, stem: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Live documents holding ``stem`` and its frequency in each."""
        postings = self.postings.get(stem)
        if postings is None:
            return np.empty(0, np.int64), np.empty(0, np.float64)
        docs, tfs = postings
        if self.live < self.size:  # skip erased documents
            keep = self.alive[docs]
            docs, tfs = docs[keep], tfs[keep]
        return docs.astype(np.int64), tfs.astype(np.float64)  # float32 would round the scores

    def frequency(self, stem: str) -> int:
        """Live documents holding ``stem``."""
        postings = self.postings.get(stem)
        if postings is None:
            return 0
        docs, _ = postings
        if self.live == self.size:  # nothing erased: every posting counts
            return len(docs)
        return int(np.count_nonzero(self.alive[docs]))

    def tf(self, stem: str, at: int) -> float:
        """Frequency of ``stem`` in the document at position ``at``."""
        postings = self.postings.get(stem)
        if postings is None:
            return 0.0
        docs, tfs = postings
        i = int(np.searchsorted(docs, at))
        return float(tfs[i]) if i < len(docs) and docs[i] == at else 0.0


def _state(b: _Block) -> Arrays:
    """A block as arrays (see :mod:`.snapshots`), erased documents left out: what a block
    loaded from the rows that are left holds."""
    n = b.size
    keep = None if b.live == n else b.alive[:n]

    def part(a: NDArray[Any]) -> NDArray[Any]:
        return a[:n] if keep is None else a[:n][keep]

    return {
        "ids": part(b.ids), "lengths": part(b.lengths), "totals": np.asarray([b.live_length]),
    } | b.postings.state(keep) | b.links.state(n, keep)  # fmt: skip


def _restored(a: Arrays) -> _Block:
    """A block from its snapshot. Its windows are measured and counted again from the links
    and lengths, as an append does (a snapshot written under other window rules, which also
    held their lengths, still reads right)."""
    n = len(a["ids"])
    every = np.arange(n, dtype=np.int64)
    b = _Block(a["ids"], a["lengths"], np.ones(n, np.bool_), n, n, float(a["totals"][0]),
               window_lengths=np.zeros(n), postings=Postings.restored(a),
               links=Links.restored(a))  # fmt: skip
    b.links.measure(every, b.lengths)
    b._count_windows(every)
    return b


def _bm25(
    idf_: float, tf: NDArray[np.float64], length: NDArray[np.float64], avgdl: float
) -> NDArray[np.float64]:
    return idf_ * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))


def _joined(parts: Sequence[Scores]) -> Scores:
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def idf(documents: int, containing: int) -> float:
    """FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), at least :data:`MIN_IDF`."""
    return max(math.log((documents - containing + 0.5) / (containing + 0.5)), MIN_IDF)


@dataclass
class _Query:
    """One query's terms over some blocks, with the statistics of those blocks together:
    idf and average length of the documents, or of their windows."""

    blocks: list[_Block]
    weights: dict[str, float]
    average: float
    windows: bool
    spread: dict[tuple[int, str], Scores]
    read: dict[tuple[int, str], Scores]
    """Each block's postings of each stem, read once for the query's own and window scores."""

    @classmethod
    def prepare(
        cls,
        blocks: list[_Block],
        stems: list[str],
        windows: bool,
        read: dict[tuple[int, str], Scores],
    ) -> _Query | None:
        documents = sum(b.live for b in blocks)
        if not stems or not documents:
            return None
        total = sum(b.live_windows if windows else b.live_length for b in blocks)
        query = cls(blocks, {}, max(total / documents, 1.0), windows, {}, read)
        for stem in stems:  # a stem twice in the query counts twice, as in FTS5
            if windows:
                if 2 * sum(b.frequency(stem) for b in blocks) >= documents:
                    continue  # in half the windows or more: idf at its floor, worth nothing
                for n, b in enumerate(blocks):
                    if (n, stem) not in query.spread:
                        query.spread[n, stem] = b.links.spread(
                            *query.postings(n, stem), *b.scratch.arrays(b.size)
                        )
                holding = sum(len(query.spread[n, stem][0]) for n in range(len(blocks)))
            else:
                holding = sum(b.frequency(stem) for b in blocks)
            if holding:
                query.weights[stem] = query.weights.get(stem, 0.0) + idf(documents, holding)
        return query

    def scores(self, n: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """BM25 of block ``n``'s documents (or their windows) that match a term, in the order
        first met; summed in the block's work arrays, so a query costs what its postings
        reach, not the block's size."""
        b = self.blocks[n]
        total, seen = b.scratch.arrays(b.size)
        touched: list[NDArray[np.int64]] = []
        try:
            for stem, weight in self.weights.items():
                if self.windows:
                    at, tf = self.spread[n, stem]
                    length = b.window_lengths[at]
                else:
                    at, tf = self.postings(n, stem)
                    length = b.lengths[at]
                fresh = at[~seen[at]]
                seen[fresh] = True
                touched.append(fresh)
                total[at] += _bm25(weight, tf, length, self.average)  # a term's positions differ
            if not touched:
                return np.empty(0, np.int64), np.empty(0, np.float64)
            matched = np.concatenate(touched)
            found = total[matched]
        finally:
            Scratch.clear(total, seen, touched)
        keep = found != 0
        return b.ids[matched[keep]], found[keep]

    def postings(self, n: int, stem: str) -> Scores:
        got = self.read.get((n, stem))
        if got is None:
            got = self.read[n, stem] = self.blocks[n].postings_of(stem)
        return got

    def window_without(self, n: int, at: int, hidden: set[int]) -> float:
        """BM25 of the window of block ``n``'s document at position ``at`` with the
        documents at positions ``hidden`` left out."""
        b = self.blocks[n]
        members = [int(m[0]) for m in b.links.members(np.asarray([at]))]
        kept = [m for m in members if m >= 0 and m not in hidden]
        length = np.asarray([float(b.lengths[kept].sum())])
        total = 0.0
        for stem, w in self.weights.items():
            tf = np.asarray([sum(b.tf(stem, m) for m in kept)])
            total += float(_bm25(w, tf, length, self.average)[0])
        return total


class KeywordIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: dict[str, _Block] = {}
        self._high = 0

    def sync(self, load_after: Loader) -> None:
        """Index every row with a message id above the high-water mark."""
        with self._lock:
            self._high, _ = catch_up(load_after, self._high, self._append)

    def _append(self, memory_id: str, rows: list[Row]) -> None:
        self._blocks.setdefault(memory_id, _Block()).append(rows)

    def whole(self) -> set[str]:
        """Memories that lost no row since they were loaded."""
        with self._lock:
            return {m for m, b in self._blocks.items() if b.live == b.size}

    def rows(self) -> int:
        with self._lock:
            return sum(b.size for b in self._blocks.values())

    def snapshot(self) -> dict[str, Arrays]:
        with self._lock:
            return {m: _state(b) for m, b in self._blocks.items()}

    def restore(self, states: dict[str, Arrays], high: int, load_others: Loader) -> None:
        """Blocks from snapshots up to row ``high``, the other memories' rows up to it from
        ``load_others``; :meth:`sync` goes on from ``high``."""
        with self._lock:
            self._blocks.update((m, _restored(a)) for m, a in states.items())
            catch_up(load_others, 0, self._append)
            self._high = high

    def drop(self, ids: Sequence[int]) -> None:
        wanted = np.sort(np.asarray(ids, dtype=np.int64))
        with self._lock:
            for block in self._blocks.values():
                block.drop(wanted)

    def scores(self, memory_ids: Iterable[str], text: str, windows: bool = False) -> Scores:
        """BM25 of ``text`` against every live entry of the memories that matches a term,
        with the statistics of those memories together; with ``windows``, against each
        entry's conversation window instead (an entry that is not a raw turn: itself)."""
        own, held = self.both(memory_ids, text, own=not windows, windows=windows)
        return held if windows else own

    def both(
        self, memory_ids: Iterable[str], text: str, *, own: bool = True, windows: bool = True
    ) -> tuple[Scores, Scores]:
        """:meth:`scores` of the entries and of their windows from one read of the postings
        (each empty where not asked for)."""
        stems, read = query_terms(text), dict[tuple[int, str], Scores]()
        with self._lock:
            blocks = [b for b in (self._blocks.get(m) for m in memory_ids) if b is not None]
            asked = [_Query.prepare(blocks, stems, w, read) if a else None
                     for a, w in ((own, False), (windows, True))]  # fmt: skip
            parts = [[q.scores(n) for n in range(len(blocks))] if q else [] for q in asked]
        return _joined(parts[0]), _joined(parts[1])

    def windows(self, memory_ids: Iterable[str], ids: Sequence[int]) -> dict[int, list[int]]:
        """For each of ``ids`` whose window holds earlier turns: their message ids."""
        wanted = np.unique(np.asarray(ids, dtype=np.int64))
        out: dict[int, list[int]] = {}
        with self._lock:
            for b in (self._blocks.get(m) for m in memory_ids):
                if b is None:
                    continue
                at = b.positions(wanted)
                earlier = b.links.members(at)[1:]
                for k, p in enumerate(at.tolist()):
                    found = [int(b.ids[m[k]]) for m in earlier if m[k] >= 0]
                    if found:
                        out[int(b.ids[p])] = found
        return out

    def rescored(
        self, memory_ids: Iterable[str], text: str, hidden: dict[int, set[int]]
    ) -> dict[int, float]:
        """Window scores of the entries keyed in ``hidden`` with those turns left out of
        their windows (turns that the search's filter hides lend their words to no one)."""
        stems = query_terms(text)
        out: dict[int, float] = {}
        with self._lock:
            blocks = [b for b in (self._blocks.get(m) for m in memory_ids) if b is not None]
            query = _Query.prepare(blocks, stems, True, {})
            if query is None:
                return {i: 0.0 for i in hidden}
            wanted = np.asarray(sorted(hidden), dtype=np.int64)
            for n, b in enumerate(blocks):
                for p in b.positions(wanted).tolist():
                    mid = int(b.ids[p])
                    gone = {int(x) for x in b.positions(np.asarray(sorted(hidden[mid])))}
                    out[mid] = query.window_without(n, p, gone)
        return out
