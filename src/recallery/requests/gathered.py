"""What a search gathers from the store in one read, before anything is ranked: the candidates
of every leg with everything the ranking stages (:mod:`recallery.retrieval.stages`) need.

The store fills these (:func:`recallery.store.gather.gather`); ranking reads them and never
goes back to the store (STYLE 21, "gather, then decide"). Plain data, no store types: they
live among the typed requests so that the store and the ranking stages share them without one
importing the other (issue 56).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from recallery.models import Entry
from recallery.ownership import Person


@dataclass(frozen=True)
class Pools:
    """The candidates of every leg: keyword matches best first, the cosine similarity of
    every candidate of any leg, the vector leg's own similarities best first, and the best
    conversation windows (empty unless asked for and the store scores them)."""

    keyword: list[tuple[int, float]]
    cosine: dict[int, float]
    vector: list[tuple[int, float]]
    windows: list[tuple[int, float]]


Leaders = Callable[[Pools, Mapping[int, int]], Sequence[int]]
"""Which candidates take conversation context, from the pools and the lengths of the window
candidates (a pure function of the ranking: :meth:`recallery.retrieval.stages.Ranking.leaders`)."""
Rings = Mapping[int, Sequence[Sequence[int]]]
"""Conversation neighbours: for each turn, its rings of turns one, two... places away."""
Placed = Callable[[Pools, Mapping[int, float], Rings, Mapping[int, int]], Sequence[int]]
"""Which candidates the ranking's later stages (time, supersession) look at, from the pools,
every candidate's cosine, the neighbours and the lengths (a pure function of the ranking:
:meth:`recallery.retrieval.stages.Ranking.placed_ids`); their valid times and links are
gathered, no other's."""


@dataclass(frozen=True)
class Wants:
    """What one search asks the store for: ``pool`` candidates per leg, ``windows``
    conversation windows, conversation neighbours up to ``span`` turns of the candidates
    ``leaders`` picks, the turns' lengths (``lengths``), valid times (``times``) and the
    turns superseding them (``hops`` links followed; 0: none), of the candidates ``placed``
    picks (None: of every candidate)."""

    pool: int
    windows: int = 0
    span: int = 0
    leaders: Leaders | None = None
    lengths: bool = False
    times: bool = False
    hops: int = 0
    placed: Placed | None = None


@dataclass(frozen=True)
class Gathered:
    """Every candidate with what ranking needs, from one read.

    ``cosine`` holds every candidate's cosine, conversation neighbours' included;
    ``neighbours`` the rings of the leaders and of their neighbours; ``lengths`` raw turns'
    lengths in characters; ``times`` valid times and ``people`` whose each timed candidate is
    (:func:`~recallery.ownership.person`); ``superseding`` the latest turn that
    supersedes a candidate (older id to newer, only newer ones the search may return) with
    both ends' entries in ``linked`` and the newer one's cosine in ``linked_cosine``. Times
    and links are those of the candidates :attr:`Wants.placed` picks, where it is given."""

    pools: Pools
    cosine: dict[int, float]
    neighbours: dict[int, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    lengths: dict[int, int] = field(default_factory=dict)
    times: dict[int, datetime] = field(default_factory=dict)
    people: dict[int, Person] = field(default_factory=dict)
    superseding: dict[int, int] = field(default_factory=dict)
    linked: dict[int, Entry] = field(default_factory=dict)
    linked_cosine: dict[int, float] = field(default_factory=dict)


__all__ = ["Gathered", "Leaders", "Placed", "Pools", "Rings", "Wants"]
