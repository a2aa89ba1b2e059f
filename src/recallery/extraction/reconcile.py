"""Consolidation: how a candidate relates to what the memory already holds. Pure functions.

:func:`plan` settles the clear cases by similarity: a candidate that matches a rejected entry is
suppressed, one that repeats a current entry is a duplicate, one with nothing close is added.
A candidate close to current entries but not the same needs judgement (a contradiction or a
second fact?): ``plan`` answers ``judge`` with the entries to show the model, and
:func:`resolve` turns the model's answer into a decision, accepting only entries it was shown.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from recallery.extraction.extractor import Candidate, fold, strip_fence

_WORD = re.compile(r"[\w'-]+")


class Action(enum.StrEnum):
    ADD = "add"
    DUPLICATE = "duplicate"
    SUPERSEDE = "supersede"
    SUPPRESS = "suppress"
    JUDGE = "judge"


@dataclass(frozen=True)
class Neighbour:
    """An existing entry near a candidate, with its cosine similarity to it."""

    message_id: int
    content: str
    similarity: float
    valid_at: datetime
    invalid_at: datetime | None = None


@dataclass(frozen=True)
class Decision:
    action: Action
    target: int | None = None
    reason: str = ""
    """Why, naming entries by id only (job logs never hold another entry's content)."""
    options: tuple[Neighbour, ...] = ()
    """For ``judge``: the entries to show the model, most similar first."""


@dataclass(frozen=True)
class Thresholds:
    same: float = 0.92
    """Cosine at or above which two statements with the same numbers and names are the same
    (duplicate, or suppressed); below it, or with other specifics, they need judgement."""
    related: float = 0.5
    """Cosine at or above which a current entry is shown to the model for judgement."""
    max_options: int = 5


DEFAULT_THRESHOLDS = Thresholds()


def plan(
    candidate: Candidate,
    neighbours: Sequence[Neighbour],
    rejected: Sequence[Neighbour],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Decision:
    """Decide what to do with ``candidate`` given current ``neighbours`` of its type and the
    memory's ``rejected`` entries of its type."""
    text = fold(candidate.content)
    for r in _by_similarity(rejected):
        if same_statement(candidate.content, r.content, r.similarity, thresholds):
            return Decision(Action.SUPPRESS, r.message_id, f"matches rejected entry {r.message_id}")
    ranked = _by_similarity(neighbours)
    for n in ranked:
        if fold(n.content) == text:
            return Decision(Action.DUPLICATE, n.message_id, f"same text as entry {n.message_id}")
    for n in ranked:
        if same_statement(candidate.content, n.content, n.similarity, thresholds):
            reason = f"cosine {n.similarity:.3f} with entry {n.message_id}"
            return Decision(Action.DUPLICATE, n.message_id, reason)
    close = tuple(n for n in ranked if n.similarity >= thresholds.related)
    if close:
        ids = ", ".join(str(n.message_id) for n in close[: thresholds.max_options])
        return Decision(
            Action.JUDGE, reason=f"close to entries {ids}", options=close[: thresholds.max_options]
        )
    return Decision(Action.ADD, reason="nothing close")


def resolve(answer: str, options: Sequence[Neighbour]) -> Decision:
    """The model's judgement (``{"action": ..., "entry": N}``, N numbering ``options`` from 1)
    as a decision. Anything malformed, or naming an entry it was not shown, becomes ``add``."""
    try:
        data = json.loads(strip_fence(answer))
    except json.JSONDecodeError:
        return Decision(Action.ADD, reason="judgement is not JSON; added")
    if not isinstance(data, dict):
        return Decision(Action.ADD, reason="judgement is not an object; added")
    action = data.get("action")
    if action == "add":
        return Decision(Action.ADD, reason="judged a new fact")
    if action not in ("duplicate_of", "supersedes"):
        return Decision(Action.ADD, reason=f"judgement action {str(action)[:20]!r} unknown; added")
    number = data.get("entry")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(options):
        return Decision(
            Action.ADD, reason=f"judgement names entry {str(number)[:20]!r}, not one shown; added"
        )
    target = options[number - 1].message_id
    if action == "duplicate_of":
        return Decision(Action.DUPLICATE, target, f"judged a duplicate of entry {target}")
    return Decision(Action.SUPERSEDE, target, f"judged to supersede entry {target}")


def closing_time(
    old_valid: datetime, old_invalid: datetime | None, new_valid: datetime
) -> datetime:
    """The superseded fact's new ``invalid_at``: when the new fact begins, never before the old
    one began, and never later than an end it already had."""
    end = max(new_valid, old_valid)
    return end if old_invalid is None else min(old_invalid, end)


def key_terms(text: str) -> frozenset[str]:
    """Words that carry a statement's specifics: numbers and capitalised names (the first
    word aside). Embeddings barely tell "is 29" from "is 39" or "Lisbon" from "Porto"."""
    words = _WORD.findall(text)
    return frozenset(
        w.casefold()
        for i, w in enumerate(words)
        if any(c.isdigit() for c in w) or (i and w[0].isupper())
    )


def same_statement(
    a: str, b: str, similarity: float, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> bool:
    """Clearly the same statement: the same folded text, or very similar (cosine
    ``similarity``) with the same numbers and names."""
    if fold(a) == fold(b):
        return True
    return similarity >= thresholds.same and key_terms(a) == key_terms(b)


def repeats_earlier(
    i: int,
    candidates: Sequence[Candidate],
    similarity: Callable[[int, int], float],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> bool:
    """Whether candidate ``i`` says what an earlier one of its type said (``similarity(j, i)``
    is the cosine of candidates ``j`` and ``i``)."""
    c = candidates[i]
    return any(
        candidates[j].type is c.type
        and same_statement(c.content, candidates[j].content, similarity(j, i), thresholds)
        for j in range(i)
    )


def _by_similarity(entries: Sequence[Neighbour]) -> list[Neighbour]:
    return sorted(entries, key=lambda n: (-n.similarity, n.message_id))
