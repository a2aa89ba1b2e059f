"""A reference for every backend's BM25: SQLite FTS5's own ``bm25()`` over a synthetic corpus.

The stores compute BM25 with the statistics of the memories searched; over one memory those
equal the whole corpus's, so their scores must equal FTS5's to rounding.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from recallery.store.text import keyword_terms

FTS5_TOKENIZER = "porter unicode61 remove_diacritics 2"
WORDS = """
    tea coffee hiking hiked hikes mountain mountains river rivers cooking cooked painting garden
    gardening sister brother birthday party travelling travel Paris Berlin school teacher teaching
    dog dogs running runner marathon piano guitar concert novel reading the a of and to in is was
    we they it on at with for
""".split()  # noqa: SIM905


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    weights = weights / weights.sum()
    order = rng.permutation(len(WORDS))
    return [
        " ".join(WORDS[order[i]] for i in rng.choice(len(WORDS), rng.integers(3, 30), p=weights))
        for _ in range(n)
    ]


class Fts5Reference:
    """SQLite FTS5's own bm25 over a fixed list of texts (positions are rowids), built once
    and asked many queries: the exact reference for benchmarks at scale."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE f USING fts5 (content, tokenize = '{FTS5_TOKENIZER}')"
        )
        self.db.executemany("INSERT INTO f (rowid, content) VALUES (?, ?)", enumerate(texts))

    def best(self, query: str, limit: int | None = None) -> list[tuple[int, float]]:
        """(position, score) best first, higher is better; equal scores (to 12 significant
        digits) newer (higher position) first, as the stores order them."""
        terms = keyword_terms(query)
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.db.execute("SELECT rowid, bm25(f) FROM f WHERE f MATCH ?", [match])
        ranked = sorted(((int(i), -float(s)) for i, s in rows), key=_tie_order)
        return ranked if limit is None else ranked[:limit]

    def close(self) -> None:
        self.db.close()


def _tie_order(hit: tuple[int, float]) -> tuple[float, int]:
    return (-float(f"{hit[1]:.12g}"), -hit[0])


def fts5_bm25(texts: list[str], query: str) -> list[tuple[int, float]]:
    """SQLite FTS5's own bm25 over ``texts`` (positions, higher is better): the reference."""
    reference = Fts5Reference(texts)
    try:
        return reference.best(query)
    finally:
        reference.close()
