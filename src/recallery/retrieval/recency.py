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

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from recallery.retrieval.fusion import Scored

#: Words that ask for the present: the prior counts double.
_NOW = re.compile(
    r"\b(now|currently|current|still|these days|nowadays|latest|at the moment|at present|"
    r"today|anymore|any more|most recent|most recently|these days)\b",
    re.IGNORECASE,
)
#: Words that ask for the beginning: the earlier turn wins instead.
_EARLIER = re.compile(
    r"\b(first|originally|original|initially|at first|used to|previously|formerly|"
    r"before (?:the|my|i|we|he|she|they)|earliest)\b",
    re.IGNORECASE,
)
#: A point in the past: no prior either way.
_PAST = re.compile(
    r"\b(back when|back in|ago|last (?:year|month|week|summer|winter|spring|autumn|fall)|"
    r"in (?:19|20)\d\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def time_lean(query: str, plain: float = 1.0) -> float:
    """How the query leans the prior: 2 when it asks for the present ("now", "currently",
    "still", "these days", "latest"), -1 when it asks for the beginning ("first",
    "originally", "used to"), 0 for a point in the past ("back when", "in 2019", "two
    years ago"), else ``plain``. The present wins over the others when both are asked for."""
    if _NOW.search(query):
        return 2.0
    if _PAST.search(query):
        return 0.0
    if _EARLIER.search(query):
        return -1.0
    return plain


#: A question in the first person: the asker asks about themselves.
_ASKER = re.compile(r"\b(i|i'm|i've|i'd|me|my|mine|myself)\b", re.IGNORECASE)
#: The past tense: the question asks about an event, not what holds now.
_PAST_TENSE = re.compile(r"\b(did|was|were|had|went|used to)\b", re.IGNORECASE)
#: How a question starts.
_QUESTION = re.compile(
    r"^\W*(what|where|which|who|whose|when|how|do|does|am|is|are|have|has|can)\b", re.IGNORECASE
)
#: A band member's cosine with the query is at least this share of the best one's: both
#: legs call it about the same thing. The fused score alone let in a turn that matched only a
#: word every turn holds ("user"): "Which city does the user live in now?" put "My sister is
#: a dentist", the latest turn, above "I moved to Lisbon". On the development seed it kept the
#: updated turn first in 85 % (from 85) and the latest move in 62 % (from 75).
SAME_THING = 0.5
#: More than one sentence: a dialogue or a passage, not one question.
_SENTENCES = re.compile(r"[.!?]\s+\S")
#: The most words a question about one's state runs to.
_QUESTION_WORDS = 25


def is_question(query: str) -> bool:
    """Whether ``query`` is one short question ("Where does Tom live now?"), not a dialogue
    or a passage an agent matches by topic."""
    text = query.strip()
    return (
        len(text.split()) <= _QUESTION_WORDS
        and _SENTENCES.search(text) is None
        and (text.endswith("?") or _QUESTION.match(text) is not None)
    )


def asks_state(query: str) -> bool:
    """Whether ``query`` is one short question in the first person and the present tense
    ("Where do I live?", "What car do I have?"): the asker asks what holds for them now,
    which the latest of their statements on it answers. A dialogue, a question about someone
    else or about the past ("Where did I live?") is not one."""
    return (
        is_question(query)
        and _ASKER.search(query) is not None
        and _PAST_TENSE.search(query) is None
    )


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
) -> list[Scored]:
    """``ranked`` (best first) with the candidates among its first ``window`` that score at
    least ``1 - band`` times the best of them, and whose cosine with the query is at least
    :data:`SAME_THING` times the best cosine among them, put in their places in order of
    valid time (``times``: an id's valid time and id), the latest first for a positive
    ``lean``, the earliest first for a negative one; every other candidate stays where it
    was, and each keeps its own score. Only the order within the window changes: what is
    found is not."""
    head = list(ranked[:window])
    if band <= 0 or not lean or not head:
        return list(ranked)
    floor = (1 - min(band, 1.0)) * head[0].score
    near = SAME_THING * max(s.vector for s in head)
    places = [
        n
        for n, s in enumerate(head)
        if s.score >= floor and s.vector >= near and s.message_id in times
    ]
    members = sorted((head[n] for n in places), key=lambda s: times[s.message_id], reverse=lean > 0)
    for n, s in zip(places, members, strict=True):
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
