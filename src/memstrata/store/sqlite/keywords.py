"""An in-process BM25 index of the stored text, one block per memory, for keyword search.

FTS5's ``bm25()`` counts the documents of the whole file, so one memory's words would shift
another's ranking; scoring with each memory's own statistics through FTS5 takes a count and a
ranked pass per query term, about 40 ms a query at 100k entries. Here each memory keeps its
postings (document number and term frequency per stem) in growable numpy arrays, and a query
scores the postings of its few terms in a handful of array operations: well under a
millisecond at 100k.

BM25 is FTS5's: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), k1 = 1.2, b = 0.75,
with N, n and the average length of the memories searched, counting entries in any state
(as the PostgreSQL store does). Words are split on anything but letters and digits, accents
removed, lower-cased and Porter-stemmed, as FTS5's ``porter unicode61 remove_diacritics 2``
does (words under 3 characters unstemmed). The stemmer is Snowball's Porter (PyStemmer), which
stems a few words otherwise than FTS5's copy ("ecology": "ecologi", not "ecolog"), so scores
equal FTS5's exactly only where no such word occurs. Stop words count in a document's length
but are not indexed, so a query word whose stem is a stop word ("one": "on") does not match
the stop word itself.

Text never changes once written (a correction is a new entry), so the index, like the vector
cache, can only be behind: :meth:`KeywordIndex.sync` reads rows committed since its last
look. Erasure marks rows dead at once; their terms stay until the process restarts (only
in memory, never on disk).
"""

from __future__ import annotations

import itertools
import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import Stemmer
from numpy.typing import NDArray

from memstrata.store.sqlite.catchup import Load, catch_up
from memstrata.store.text import MAX_TERMS, STOP_WORDS

K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a term in more than half of the documents.
MIN_IDF = 1e-6
#: Word lengths FTS5's porter tokenizer stems (others pass unchanged).
STEM_MIN, STEM_MAX = 3, 64
Row = tuple[int, str, str]
"""(message_id, memory_id, content) of an entry."""
Loader = Load[Row]

_TOKEN = re.compile(r"[^\W_]+")
_stemmer_lock = threading.Lock()
_stemmer: Any = Stemmer.Stemmer("porter")


def _words(text: str) -> list[str]:
    """Letters-and-digits runs of ``text``, lower-cased, accents removed."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _TOKEN.findall(text.lower())


def _stem_map(words: Iterable[str]) -> dict[str, str]:
    """Each distinct word of ``words`` to its Porter stem. Like FTS5's porter tokenizer, words
    of fewer than 3 or more than 64 characters stay as they are ("us" is not "u")."""
    distinct = list(set(words))
    stemmed = [w for w in distinct if STEM_MIN <= len(w) <= STEM_MAX]
    with _stemmer_lock:  # a Stemmer object is not safe to share between threads
        stems: list[str] = _stemmer.stemWords(stemmed)
    return dict(zip(distinct, distinct, strict=True)) | dict(zip(stemmed, stems, strict=True))


def _indexed(text: str) -> tuple[list[str], int]:
    """The words of ``text`` worth indexing (no stop words), and its length (every word)."""
    words = _words(text)
    return [w for w in words if w not in STOP_WORDS], len(words)


def query_terms(text: str) -> list[str]:
    """The stems a query matches: its distinct non-stop words, at most :data:`MAX_TERMS`."""
    distinct = list(dict.fromkeys(_indexed(text)[0]))[:MAX_TERMS]
    stem = _stem_map(distinct)
    return [stem[w] for w in distinct]


def _grow(array: NDArray[Any], need: int) -> NDArray[Any]:
    if need <= len(array):
        return array
    grown = np.zeros(max(need, 2 * len(array), 64), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


@dataclass
class _Postings:
    """Documents (block positions) holding one stem, with its frequency in each."""

    docs: NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    tfs: NDArray[np.float32] = field(default_factory=lambda: np.empty(0, np.float32))
    size: int = 0

    def extend(self, docs: NDArray[np.int64], tfs: NDArray[np.int64]) -> None:
        need = self.size + len(docs)
        self.docs, self.tfs = _grow(self.docs, need), _grow(self.tfs, need)
        self.docs[self.size : need] = docs
        self.tfs[self.size : need] = tfs
        self.size = need

    def view(self) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        return self.docs[: self.size], self.tfs[: self.size]


@dataclass
class _Block:
    """One memory's documents in message-id order and its postings."""

    ids: NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    lengths: NDArray[np.float64] = field(default_factory=lambda: np.empty(0, np.float64))
    alive: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    size: int = 0
    live: int = 0
    live_length: float = 0.0
    postings: dict[str, _Postings] = field(default_factory=dict)

    def append(self, rows: Sequence[Row]) -> None:
        """Index ``rows``, ids above any already here: the (stem,
        document) pairs of the whole batch are counted with one sort, not word by word."""
        start, need = self.size, self.size + len(rows)
        self.ids, self.lengths = _grow(self.ids, need), _grow(self.lengths, need)
        self.alive = _grow(self.alive, need)
        documents = [_indexed(text) for _, _, text in rows]
        self.ids[start:need] = [message_id for message_id, _, _ in rows]
        self.lengths[start:need] = [length for _, length in documents]
        self.alive[start:need] = True
        self.live_length += sum(length for _, length in documents)
        self.size, self.live = need, self.live + len(rows)
        stem = _stem_map(w for words, _ in documents for w in words)
        names = list(set(stem.values()))
        number = {name: i for i, name in enumerate(names)}
        term = np.fromiter((number[stem[w]] for words, _ in documents for w in words), np.int64)
        per_doc = np.fromiter((len(words) for words, _ in documents), np.int64, len(rows))
        doc = np.repeat(np.arange(start, need, dtype=np.int64), per_doc)
        pairs, tfs = np.unique(term * need + doc, return_counts=True)
        terms, docs = pairs // need, pairs % need
        bounds = [0, *(np.flatnonzero(np.diff(terms)) + 1).tolist(), len(pairs)]
        for lo, hi in itertools.pairwise(bounds):
            if hi > lo:
                posting = self.postings.setdefault(names[int(terms[lo])], _Postings())
                posting.extend(docs[lo:hi], tfs[lo:hi])

    def drop(self, ids: NDArray[np.int64]) -> None:
        known = self.ids[: self.size]
        at = np.searchsorted(known, ids)
        at = at[(at < self.size) & (known[np.minimum(at, self.size - 1)] == ids)]
        at = at[self.alive[at]]
        self.alive[at] = False
        self.live -= len(at)
        self.live_length -= float(self.lengths[at].sum())

    def frequency(self, stem: str) -> int:
        """Live documents holding ``stem``."""
        postings = self.postings.get(stem)
        if postings is None:
            return 0
        docs, _ = postings.view()
        if self.live == self.size:  # nothing erased: every posting counts
            return len(docs)
        return int(np.count_nonzero(self.alive[docs]))

    def scores(
        self, weights: dict[str, float], avgdl: float
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """BM25 of every live document matching any stem of ``weights`` (stem -> idf)."""
        hit_docs, hit_scores = [], []
        for stem, idf in weights.items():
            postings = self.postings.get(stem)
            if postings is None:
                continue
            docs, tfs = postings.view()
            if self.live < self.size:  # skip erased documents
                keep = self.alive[docs]
                docs, tfs = docs[keep], tfs[keep]
            tf = tfs.astype(np.float64)  # float32 would round the scores
            norm = K1 * (1 - B + B * self.lengths[docs] / avgdl)
            hit_docs.append(docs)
            hit_scores.append(idf * tf * (K1 + 1) / (tf + norm))
        if not hit_docs:
            return np.empty(0, np.int64), np.empty(0, np.float64)
        total: NDArray[np.float64] = np.bincount(
            np.concatenate(hit_docs), weights=np.concatenate(hit_scores)
        ).astype(np.float64, copy=False)
        matched = np.flatnonzero(total)
        return self.ids[matched], total[matched]


def idf(documents: int, containing: int) -> float:
    """FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), at least :data:`MIN_IDF`."""
    return max(math.log((documents - containing + 0.5) / (containing + 0.5)), MIN_IDF)


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

    def drop(self, ids: Sequence[int]) -> None:
        wanted = np.sort(np.asarray(ids, dtype=np.int64))
        with self._lock:
            for block in self._blocks.values():
                block.drop(wanted)

    def scores(
        self, memory_ids: Iterable[str], text: str
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """BM25 of ``text`` against every live entry of the memories that matches a term,
        with the statistics of those memories together."""
        stems = query_terms(text)
        with self._lock:
            blocks = [b for b in (self._blocks.get(m) for m in memory_ids) if b is not None]
            documents = sum(b.live for b in blocks)
            if not stems or not documents:
                return np.empty(0, np.int64), np.empty(0, np.float64)
            avgdl = max(sum(b.live_length for b in blocks) / documents, 1.0)
            weights: dict[str, float] = {}
            for stem in stems:  # a stem twice in the query counts twice, as in FTS5
                n = sum(b.frequency(stem) for b in blocks)
                if n:
                    weights[stem] = weights.get(stem, 0.0) + idf(documents, n)
            parts = [b.scores(weights, avgdl) for b in blocks]
        ids = np.concatenate([p[0] for p in parts])
        return ids, np.concatenate([p[1] for p in parts])
