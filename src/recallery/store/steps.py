"""A search's gather in two steps, for a backend that pays a round trip per read (PostgreSQL):
what each step returns. :mod:`.gather` asks the backend for them where it offers them
(:meth:`~.backend.Backend.first_step`, :meth:`~.backend.Backend.second_step`) and reads each
part apart otherwise (SQLite, in process).

Step one runs once the keyword legs are in: the vector leg, and the cosines and raw-turn
lengths of the keyword and window candidates. Step two runs once the ranking's pure
``leaders`` are picked: the leaders' conversations, which of their turns pass the search's
filter, those turns' cosines and lengths, the valid times of every turn read, and the turns
superseding them (links followed as far as the search asks) with both ends' entries.
A step answers for the turns it read (:attr:`SecondStep.read`); the gather reads any other
turn apart, so a step that reads less changes the round trips, never the ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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


__all__ = ["FirstStep", "SecondStep"]
