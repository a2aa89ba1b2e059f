"""Window BM25 of the SQLite store's keyword index against a reference computed from the
texts themselves: for random conversations in two memories, random erasures and random
queries, each window's score (a raw turn with the live turns written before it in its
conversation: at least two, more while it holds fewer words than the budget) is exactly the
BM25 of its words with the windows' statistics."""

from __future__ import annotations

from collections import Counter
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from recallery.store import windowing
from recallery.store.sqlite.keywords import K1, B, KeywordIndex, Row, idf, query_terms

WORDS = ["tea", "harbour", "violin", "garden", "rain", "lamp", "river", "cello", "bread", "kite"]
MEMORIES = ("m1", "m2")


def _stem(word: str) -> str:
    stem: str = query_terms(word)[0]
    return stem


def _members(message_id: int, earlier: list[int], words: dict[int, list[str]]) -> list[int]:
    """A turn and the turns before it its window holds: at least SPAN, more while it holds
    fewer words than WINDOW_TOKENS, at most REACH."""
    members = [message_id]
    for before in earlier[::-1][: windowing.REACH]:
        held = sum(len(words[m]) for m in members)
        if len(members) > windowing.SPAN and held >= windowing.WINDOW_TOKENS:
            break
        members.append(before)
    return members


def _reference(rows: list[Row], erased: set[int], memories: tuple[str, ...], query: str,
               windows: bool = True) -> dict[int, float]:  # fmt: skip
    """Window BM25 of every live entry of ``memories``; not ``windows``: each entry's own."""
    live = [r for r in rows if r[1] in memories and r[0] not in erased]
    words = {r[0]: [_stem(w) for w in r[2].split()] for r in live}
    window: dict[int, list[int]] = {}
    earlier: dict[tuple[str, str], list[int]] = {}
    for message_id, memory, _, conversation in live:
        if conversation is None or not windows:
            window[message_id] = [message_id]
            continue
        turns = earlier.setdefault((memory, conversation), [])
        window[message_id] = _members(message_id, turns, words)
        turns.append(message_id)
    tf = {i: Counter(s for m in members for s in words[m]) for i, members in window.items()}
    length = {i: sum(len(words[m]) for m in members) for i, members in window.items()}
    documents = len(live)
    if not documents:
        return {}
    average = max(sum(length.values()) / documents, 1.0)
    weights: dict[str, float] = {}
    for stem in query_terms(query):
        if windows and 2 * sum(stem in words[i] for i in words) >= documents:
            continue
        holding = sum(1 for i in tf if tf[i][stem])
        if holding:
            weights[stem] = weights.get(stem, 0.0) + idf(documents, holding)
    out: dict[int, float] = {}
    for i in window:
        total = 0.0
        for stem, weight in weights.items():
            f = float(tf[i][stem])
            if f:
                norm = K1 * (1 - B + B * length[i] / average)
                total += weight * f * (K1 + 1) / (f + norm)
        if total:
            out[i] = total
    return out


turns = st.lists(
    st.tuples(
        st.sampled_from(MEMORIES),
        st.sampled_from([None, "alice", "bob", "carol"]),  # None: not a raw turn
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    turns=turns,
    erase=st.sets(st.integers(1, 40), max_size=10),
    queries=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), max_size=3),
    both=st.booleans(),
    budget=st.one_of(st.just(windowing.WINDOW_TOKENS), st.integers(3, 24)),
)
def test_window_scores_are_the_bm25_of_the_windows_words(
    turns: list[tuple[str, str | None, list[str]]],
    erase: set[int],
    queries: list[list[str]],
    both: bool,
    budget: int,
) -> None:
    """Window and plain scores of several queries in turn on one index, asked apart and
    together: each query's are its own, whatever the index scored before (its work arrays
    are zeroed between uses). Small word budgets stop windows between two turns back and
    the most, so each window's reach, and its recount after an erasure, is checked."""
    with patch.object(windowing, "WINDOW_TOKENS", budget):
        _check_window_scores(turns, erase, queries, both)


def _check_window_scores(
    turns: list[tuple[str, str | None, list[str]]],
    erase: set[int],
    queries: list[list[str]],
    both: bool,
) -> None:
    rows: list[Row] = [
        (n, memory, " ".join(words), None if who is None else f"{who}\x1fagent\x1fs1")
        for n, (memory, who, words) in enumerate(turns, 1)
    ]
    index = KeywordIndex()
    index.sync(lambda high: [r for r in rows if r[0] > high])
    index.drop(sorted(erase))
    _check_reach_grows_by_one_at_most(index)
    memories = MEMORIES if both else MEMORIES[:1]
    for query in [["tea", "rain"], *queries]:
        text = " ".join(query)
        together = index.both(memories, text)  # one read of the postings for both
        for windows in (True, False):
            expected = _reference(rows, erase, memories, text, windows)
            for ids, scores in (index.scores(memories, text, windows=windows), together[windows]):
                assert dict(zip(ids.tolist(), scores.tolist(), strict=True)) == expected


def _check_reach_grows_by_one_at_most(index: KeywordIndex) -> None:
    """The window spread stops a posting at the first window that does not reach it, which
    is exact only if no window reaches more than one turn further back than the one before."""
    for block in index._blocks.values():
        chained = np.flatnonzero(block.links.after >= 0)
        after = block.links.after[chained]
        assert (block.links.reach[after] <= block.links.reach[chained] + 1).all()


def test_an_erasure_measures_the_windows_after_it_again() -> None:
    """Erasing a long turn lets the short turns after it reach further back (and a short one
    lets them reach less far): every single erasure, at several word budgets, scores as a
    fresh index of the rows left does."""
    said = ["tea", "rain", "kite", "lamp lamp lamp lamp lamp lamp lamp lamp", "river", "cello"]
    rows: list[Row] = [(n, "m1", text, "alice\x1fagent\x1fs1") for n, text in enumerate(said, 1)]
    for budget in range(4, 14):
        with patch.object(windowing, "WINDOW_TOKENS", budget):
            for gone in range(1, len(rows) + 1):
                index = KeywordIndex()
                index.sync(lambda high: [r for r in rows if r[0] > high])
                index.drop([gone])
                _check_reach_grows_by_one_at_most(index)
                for query in ("tea", "rain kite", "lamp"):
                    ids, scores = index.scores(MEMORIES[:1], query, windows=True)
                    expected = _reference(rows, {gone}, MEMORIES[:1], query)
                    assert dict(zip(ids.tolist(), scores.tolist(), strict=True)) == expected
