"""Time in the ranking: among the best candidates, the later valid time wins ties of
relevance, by a prior the query can strengthen or turn round, and a question about the
present orders its band of close candidates by time. Pure functions over plain data.

A memory's turns disagree with each other as a person's life changes ("I live in Lisbon",
later "we just moved into our flat in Auckland"). The old turn is often the canonical
phrasing and wins on words and vectors alike, so relevance alone returns the stale fact
first. The prior lifts each of the best candidates in proportion to its own score and to
how late it holds among them, so a recent turn about the same thing overtakes an older one
of about the same relevance, and one about something else stays where it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from recallery.ownership import Person
from recallery.retrieval.fusion import Scored
from recallery.text.cues import read


def time_lean(query: str, plain: float = 1.0) -> float:
    """How the query leans the prior, in its own language (:func:`recallery.text.cues.read`):
    2 when it asks for the present ("now", "currently", "still", 现在, jetzt), -1 when it asks
    for the beginning ("first", "originally", "used to", 最初), 0 for a point in the past
    ("back when", "in 2019", "two years ago", 去年), else ``plain``. The present wins over the
    others when both are asked for."""
    cues = read(query)
    if cues.now:
        return 2.0
    if cues.past:
        return 0.0
    if cues.earlier:
        return -1.0
    return plain


#: A band member's cosine with the query lies at least this share of the way from the
#: candidates' mean cosine to the best one in the band: the vectors call it about the same
#: thing. A share of the embedder's own spread, not of raw cosine: multilingual-e5's
#: similarities bunch above 0.8, so half the best cosine let every candidate in and "What is my
#: job?" put the latest turn first. The fused score alone let in a turn that matched only a
#: word every turn holds ("user"): "Which city does the user live in now?" put "My sister is
#: a dentist", the latest turn, above "I moved to Lisbon".
SAME_THING = 0.5


def is_question(query: str) -> bool:
    """Whether ``query`` is one short question ("Where does Tom live now?", 我住在哪里？), not
    a dialogue or a passage an agent matches by topic."""
    return read(query).question


def asks_state(query: str) -> bool:
    """Whether ``query`` is one short question in the first person and the present tense
    ("Where do I live?", "What car do I have?", 我开什么车？): the asker asks what holds for
    them now, which the latest of their statements on it answers. A dialogue, a question about
    someone else or about the past ("Where did I live?") is not one, nor a question in a
    language without cues (:data:`recallery.text.cues.LANGUAGES`)."""
    cues = read(query)
    return cues.question and cues.asker and not cues.past_tense


def band_lean(query: str) -> float:
    """Which way time orders the band of ``query``'s close candidates, for one short question
    only (:func:`is_question`): positive (latest first) when it asks for the present by its
    words ("now", "currently") or about the asker's state (:func:`asks_state`), negative
    (earliest first) when it asks for the beginning, else 0 (as ranked). A dialogue's "now"
    or "today" is part of what it talks about, not a question about the present."""
    if not is_question(query):
        return 0.0
    return time_lean(query, 1.0 if asks_state(query) else 0.0)


def with_time_band(
    ranked: Sequence[Scored],
    times: Mapping[int, tuple[datetime, int]],
    *,
    band: float,
    lean: float,
    window: int,
    mean: float = 0.0,
    people: Mapping[int, Person] | None = None,
) -> list[Scored]:
    """``ranked`` (best first) with the candidates among its first ``window`` that score at
    least ``1 - band`` times the best of them, and whose cosine with the query lies at least
    :data:`SAME_THING` of the way from ``mean`` (the candidates' mean cosine: what this
    embedder gives a text about anything) to the best cosine among them, put in their places
    in order of valid time (``times``: an id's valid time and id), the latest first for a positive
    ``lean``, the earliest first for a negative one; every other candidate stays where it
    was, and each keeps its own score. Only the order within the window changes: what is
    found is not.

    Time orders one person's statements only (``people``: whose each candidate is, design
    invariant 7): the later of two people's turns says nothing about whether the earlier
    one still holds, so each person's members take that person's places among them, in
    time order, and never another's. In a memory shared by customers, "Which instrument do
    I practise?" no longer puts a neighbour's later "Our neighbour plays loud music" above
    "I play the violin"."""
    head = list(ranked[:window])
    if band <= 0 or not lean or not head:
        return list(ranked)
    floor = (1 - min(band, 1.0)) * head[0].score
    best = max(s.vector for s in head)
    near = mean + SAME_THING * (best - mean)
    places = [
        n
        for n, s in enumerate(head)
        if s.score >= floor and s.vector >= near and s.message_id in times
    ]
    groups: dict[Person | None, list[int]] = {}
    for n in places:
        groups.setdefault(people.get(head[n].message_id) if people else None, []).append(n)
    for ns in groups.values():
        members = sorted((head[n] for n in ns), key=lambda s: times[s.message_id], reverse=lean > 0)
        for n, s in zip(ns, members, strict=True):
            head[n] = s
    return head + list(ranked[window:])


def with_recency(
    ranked: Sequence[Scored],
    times: Mapping[int, tuple[datetime, int]],
    *,
    weight: float,
    lean: float = 1.0,
    limit: int | None = None,
) -> list[Scored]:
    """``ranked`` (best first) reordered by each score times ``1 + weight * lean * r``, where
    ``r`` is where the candidate's time lies among them, 0 for the earliest and 1 for the
    latest (ties of valid time by id); the best ``limit`` of them. ``times`` maps an id to
    its valid time and id; a candidate without a time keeps its score."""
    step = weight * lean
    known = [s.message_id for s in ranked if s.message_id in times]
    if not step or len(known) < 2:
        return list(ranked[:limit])
    order = sorted(known, key=lambda i: times[i])
    place = {i: n / (len(order) - 1) for n, i in enumerate(order)}
    lifted = [
        replace(s, score=s.score * (1 + step * place[s.message_id])) if s.message_id in place else s
        for s in ranked
    ]
    lifted.sort(key=lambda s: (-s.score, -s.message_id))
    return lifted[:limit]


__all__ = [
    "SAME_THING",
    "asks_state",
    "band_lean",
    "is_question",
    "time_lean",
    "with_recency",
    "with_time_band",
]
