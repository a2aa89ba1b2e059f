"""A search's gather in two steps, for a backend that pays a round trip per read (PostgreSQL):
what each step returns, and what the keyword legs read beside them. :mod:`.gather` asks the
backend for them where it offers them (:meth:`~.backend.Backend.first_step`,
:meth:`~.backend.Backend.second_step`) and reads each part apart otherwise (SQLite, in process).

Step one: the vector leg, and the cosines and raw-turn lengths of the keyword and window
candidates the keyword legs did not read themselves. Where the legs run on a second
connection, the caller hands them the query's vector (:data:`Handover`) and they read those in
their last statement (:class:`KeywordStep`), so step one is the vector leg alone, read while
they run; where they run in the caller, step one follows them and reads all three.

Step two runs once the ranking's pure ``leaders`` are picked: the leaders' conversations,
which of their turns pass the search's filter, those turns' cosines and lengths, the valid
times of every turn read, and the turns superseding them (links followed as far as the search
asks) with both ends' entries.
A step answers for the turns it read (:attr:`SecondStep.read`); the gather reads any other
turn apart, so a step that reads less changes the round trips, never the ranking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from recallery.models import Entry
from recallery.ownership import Person
from recallery.store.neighbours import Near


@dataclass(frozen=True)
class FirstStep:
    """The vector leg (message id, cosine; best first), the cosines of the candidates asked
    (those with a stored vector; 0 for another dimension) and the lengths of the raw turns
    among those asked for lengths."""

    vector: list[tuple[int, float]]
    cosine: dict[int, float]
    lengths: dict[int, int]


Handover = Callable[[], "NDArray[np.float32] | None"]
"""The query's vector for the keyword legs beside the caller: it waits for the caller's
embedding where the legs run on another thread, and is None where they run in the caller
before it (or the embedding failed): then they read no cosines."""


@dataclass(frozen=True)
class KeywordStep:
    """The keyword leg and the conversation windows (message id, score; best first) and what
    the backend read beside them: of the turns in ``read``, the cosines of those with a
    stored vector (0 for another dimension) and the lengths of the raw ones. ``read`` holds
    every candidate of both legs where the backend measured them, and nothing where it did
    not (SQLite, or no vector handed over)."""

    keyword: list[tuple[int, float]]
    windows: list[tuple[int, float]]
    read: frozenset[int] = frozenset()
    cosine: dict[int, float] = field(default_factory=dict)
    lengths: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SecondStep:
    """What step two read, of the scope's turns: the candidates, the leaders (``centres``)
    and their conversations (``near``: each raw leader's turns on either side, nearest first,
    visible or not) and the newer ends of supersession links.

    ``passes``: those of ``read`` the search's filter lets through; ``cosine``, ``lengths``
    and ``times``: as :meth:`~.reader.Reader.cosines`, :meth:`~.reader.Reader.lengths` and
    the valid times give them for ``read``, and ``people`` whose each timed turn is;
    ``links``: for each of ``read`` that a later turn supersedes, the turn reached by
    following the latest link as many times as asked;
    ``entries``: both ends of every link."""

    read: frozenset[int]
    followed: frozenset[int]
    centres: frozenset[int]
    near: dict[int, Near]
    passes: frozenset[int]
    cosine: dict[int, float]
    lengths: dict[int, int]
    times: dict[int, datetime]
    people: dict[int, Person]
    links: dict[int, int]
    entries: dict[int, Entry]


__all__ = ["FirstStep", "Handover", "KeywordStep", "SecondStep"]
