"""The walk that keeps a turn's visible conversation neighbours, against the plain reading of
its contract: at each distance 1..span, the next visible turn on each side."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recallery.store.neighbours import around, nearest_visible, reach, visible_neighbours

Near = dict[int, tuple[tuple[int, ...], tuple[int, ...]]]


def counting(allowed: set[int]) -> tuple[Callable[[Iterable[int]], set[int]], list[set[int]]]:
    """A filter check that lets ``allowed`` through, and the list of what it was asked."""
    asked: list[set[int]] = []

    def passing(ids: Iterable[int]) -> set[int]:
        wanted = set(ids)
        asked.append(wanted)
        return wanted & allowed

    return passing, asked


@st.composite
def conversations(draw: st.DrawFn) -> tuple[Near, set[int], int]:
    """Sides of a few turns drawn from one pool of ids, which ids pass, and the span."""
    pool = list(range(1, 40))
    near: Near = {}
    for mid in draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6, unique=True)):
        others = [i for i in pool if i != mid]
        side = st.lists(st.sampled_from(others), max_size=9, unique=True)
        before = draw(side)
        after = draw(side.filter(lambda a, b=before: not set(a) & set(b)))
        near[mid] = (tuple(before), tuple(after))
    allowed = set(draw(st.lists(st.sampled_from(pool), max_size=40)))
    return near, allowed, draw(st.integers(1, 3))


@settings(max_examples=300, deadline=None)
@given(conversations())
# 25 is checked on 26's side first, so turn 1's walk must go past a depth with nothing new
@example(({1: ((3, 4, 25, 2), ()), 26: ((), (25,))}, {2}, 1))
def test_each_distance_holds_the_next_visible_turn_of_each_side(
    case: tuple[Near, set[int], int],
) -> None:
    near, allowed, span = case
    passing, asked = counting(allowed)
    got = nearest_visible(near, span, passing)
    for mid, sides in near.items():
        shown = [[n for n in side if n in allowed] for side in sides]
        want = tuple(tuple(s[d] for s in shown if d < len(s)) for d in range(span))
        assert got[mid] == want, (mid, sides)
    assert all(a.isdisjoint(b) for a, b in itertools.combinations(asked, 2))  # none twice


@st.composite
def conversation_sides(draw: st.DrawFn) -> tuple[list[list[int]], Near, int]:
    """A few conversations of distinct ids in order, some turns of them as centres with their
    sides reaching twice ``reach`` (fewer where a conversation ends), and ``reach``."""
    reach = draw(st.integers(1, 4))
    lengths = draw(st.lists(st.integers(1, 14), min_size=1, max_size=3))
    ids = iter(draw(st.permutations(range(1, sum(lengths) + 1))))
    talks = [[next(ids) for _ in range(n)] for n in lengths]
    near: Near = {}
    for talk in talks:
        for at in draw(st.lists(st.integers(0, len(talk) - 1), max_size=3, unique=True)):
            before = tuple(talk[max(at - 2 * reach, 0) : at][::-1])
            near[talk[at]] = (before, tuple(talk[at + 1 : at + 1 + 2 * reach]))
    return talks, near, reach


@settings(max_examples=300, deadline=None)
@given(conversation_sides())
def test_a_neighbours_sides_come_from_its_centres(
    case: tuple[list[list[int]], Near, int],
) -> None:
    talks, near, reach = case
    within = {n for sides in near.values() for side in sides for n in side[:reach]}
    got = around(near, within | {0}, reach)  # 0 is no turn: nothing to say of it
    assert got.keys() == within
    for talk in talks:
        for at, turn in enumerate(talk):
            if turn in within:
                before = tuple(talk[max(at - reach, 0) : at][::-1])
                assert got[turn] == (before, tuple(talk[at + 1 : at + 1 + reach])), turn


@st.composite
def walks(draw: st.DrawFn) -> tuple[Near, set[int], int]:
    """Conversations in order, a few centres with the sides :func:`visible_neighbours` needs
    (twice its reach each way, fewer where a conversation ends), which turns pass, the span."""
    span = draw(st.integers(1, 2))
    far = 2 * reach(span)
    lengths = draw(st.lists(st.integers(1, 30), min_size=1, max_size=3))
    ids = iter(draw(st.permutations(range(1, sum(lengths) + 1))))
    talks = [[next(ids) for _ in range(n)] for n in lengths]
    near: Near = {}
    for talk in talks:
        for at in draw(
            st.lists(st.integers(0, len(talk) - 1), min_size=1, max_size=4, unique=True)
        ):
            near[talk[at]] = (
                tuple(talk[max(at - far, 0) : at][::-1]),
                tuple(talk[at + 1 : at + 1 + far]),
            )
    everyone = [i for talk in talks for i in talk]
    hidden = set(draw(st.lists(st.sampled_from(everyone), max_size=len(everyone) // 3)))
    return near, set(everyone) - hidden, span


@settings(max_examples=300, deadline=None)
@given(walks())
def test_both_walks_are_checked_together_and_find_what_each_walk_finds(
    case: tuple[Near, set[int], int],
) -> None:
    """With ``theirs``, the neighbours and their own neighbours are what the two walks find one
    after the other, no turn is asked about twice, and where no turn is hidden the filter is
    asked once."""
    near, allowed, span = case
    passing, asked = counting(allowed)
    plain, _ = counting(allowed)
    far = reach(span)
    want = nearest_visible({m: (b[:far], a[:far]) for m, (b, a) in near.items()}, span, plain)
    joined = {n for rings in want.values() for ring in rings for n in ring}
    want.update(nearest_visible(around(near, joined - want.keys(), far), span, plain))
    assert visible_neighbours(near, span, passing, theirs=True) == want
    assert all(a.isdisjoint(b) for a, b in itertools.combinations(asked, 2))
    if allowed >= {*near, *(n for sides in near.values() for side in sides for n in side)}:
        assert len(asked) <= 1
