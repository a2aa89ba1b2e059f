"""A reference for every backend's BM25: SQLite FTS5's own ``bm25()`` over a synthetic corpus.

The stores compute BM25 with the statistics of the memories searched; over one memory those
equal the whole corpus's, so their scores must equal FTS5's to rounding.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from memstrata.store.text import keyword_terms

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


def fts5_bm25(texts: list[str], query: str) -> list[tuple[int, float]]:
    """SQLite FTS5's own bm25 over ``texts`` (positions, higher is better): the reference."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5 (content, tokenize = '{FTS5_TOKENIZER}')")
    db.executemany("INSERT INTO f (rowid, content) VALUES (?, ?)", enumerate(texts))
    match = " OR ".join(f'"{t}"' for t in keyword_terms(query))
    rows = db.execute("SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY 2", [match])
    return [(int(i), -float(score)) for i, score in rows]
