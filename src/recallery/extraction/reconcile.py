"""Consolidation: how a candidate relates to what the memory already holds. Pure functions.

:func:`plan` settles the clear cases by the statement's words: a candidate that says what a
rejected entry says is suppressed, one that says what a current entry says is a duplicate, one
with nothing close is added. A candidate close to current entries but not the same needs
judgement (a repeat in other words, a contradiction or a second fact?): ``plan`` answers
``judge`` with the entries to show the model, and :func:`resolve` turns the model's answer into
a decision, accepting only entries it was shown.

A repeat means the same statement (design invariant 8): closeness alone never merges two
statements. "These days I drink coffee, not tea" lies at cosine 0.996 from "prefers tea over
coffee", and "I like tea" next to "I don't like tea"; an embedding hardly sees negation,
polarity, quantity, time or the direction of a preference. Only the same words in the same
order (:func:`words`: case, width, punctuation and spacing aside) are a repeat without asking;
any word added, removed or changed (not, no, 不, nicht, не, now, misdiagnosis), any other
number, or the same words in another order ("tea over coffee", "coffee over tea") go to the
model's judgement, and without a model the candidate is added. No word list is involved, so
the rule holds in every language.
"""

from __future__ import annotations

import enum
import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from recallery.extraction.extractor import Candidate, strip_fence


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
    related: float = 0.5
    """Cosine at or above which a current entry is shown to the model for judgement."""
    max_options: int = 5


DEFAULT_THRESHOLDS = Thresholds()


class Difference(enum.StrEnum):
    """How two statements' words differ (:func:`difference`); a reason names it, never the
    words themselves."""

    NONE = "the same words"
    ORDER = "the same words in another order"
    NUMBERS = "other numbers"
    WORDS = "other words"


def plan(
    candidate: Candidate,
    neighbours: Sequence[Neighbour],
    rejected: Sequence[Neighbour],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Decision:
    """Decide what to do with ``candidate`` given current ``neighbours`` of its type and the
    memory's ``rejected`` entries of its type."""
    said = words(candidate.content)
    for r in _by_similarity(rejected):
        if words(r.content) == said:
            return Decision(Action.SUPPRESS, r.message_id, f"matches rejected entry {r.message_id}")
    ranked = _by_similarity(neighbours)
    for n in ranked:
        if words(n.content) == said:
            return Decision(Action.DUPLICATE, n.message_id, f"same text as entry {n.message_id}")
    close = tuple(n for n in ranked if n.similarity >= thresholds.related)[: thresholds.max_options]
    if not close:
        return Decision(Action.ADD, reason="nothing close")
    ids = ", ".join(str(n.message_id) for n in close)
    first = close[0]
    kind = _compare(said, words(first.content))
    reason = (
        f"close to entries {ids}; entry {first.message_id} "
        f"(cosine {first.similarity:.3f}) has {kind}"
    )
    return Decision(Action.JUDGE, reason=reason, options=close)


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


#: Scripts written without spaces between words: each character is a word of its own
#: (Han, Hiragana, Katakana, Thai, Lao, Myanmar, Khmer; CJK compatibility ideographs;
#: the supplementary ideograph planes).
_UNSPACED = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3FFFF),
)


def words(text: str) -> tuple[str, ...]:
    """A statement's words as the repeat rule compares them, in order: runs of letters, marks
    and digits of the NFKC-normalised, case-folded text (marks stay: a Devanagari vowel sign
    or an accent tells words apart), each character of a script written without spaces a word
    of its own. Punctuation, spacing, case and full-width forms make no difference."""
    out: list[str] = []
    run: list[str] = []
    for c in unicodedata.normalize("NFKC", text).casefold():
        if unicodedata.category(c)[0] not in "LMN":
            _flush(run, out)
        elif _unspaced(c):
            _flush(run, out)
            out.append(c)
        else:
            run.append(c)
    _flush(run, out)
    return tuple(out)


def difference(a: str, b: str) -> Difference:
    """How statements ``a`` and ``b`` differ in their :func:`words`."""
    return _compare(words(a), words(b))


def same_statement(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are the same statement: the same words in the same order.
    Closeness of their vectors never makes them so (see the module's docstring)."""
    return words(a) == words(b)


def repeats_earlier(
    i: int,
    candidates: Sequence[Candidate],
    similarity: Callable[[int, int], float] | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> bool:
    """Whether candidate ``i`` says what an earlier one of its type said. ``similarity`` and
    ``thresholds`` are accepted for callers and not consulted: a repeat is the same words,
    however close two other statements are."""
    c = candidates[i]
    said = words(c.content)
    return any(
        candidates[j].type is c.type and words(candidates[j].content) == said for j in range(i)
    )


def _compare(a: tuple[str, ...], b: tuple[str, ...]) -> Difference:
    if a == b:
        return Difference.NONE
    if Counter(a) == Counter(b):
        return Difference.ORDER
    if _numbers(a) != _numbers(b):
        return Difference.NUMBERS
    return Difference.WORDS


def _numbers(ws: tuple[str, ...]) -> Counter[str]:
    return Counter(w for w in ws if any(c.isdigit() for c in w))


def _unspaced(c: str) -> bool:
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _UNSPACED)


def _flush(run: list[str], out: list[str]) -> None:
    if run:
        out.append("".join(run))
        run.clear()


def _by_similarity(entries: Sequence[Neighbour]) -> list[Neighbour]:
    return sorted(entries, key=lambda n: (-n.similarity, n.message_id))
