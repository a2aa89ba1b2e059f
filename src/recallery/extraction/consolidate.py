"""The reconciliation procedure, written once for extraction jobs and agent statements: each
candidate is checked against the earlier candidates of its call
(:func:`~recallery.extraction.reconcile.repeats_earlier`), then against the memory's near
entries of the same person (:func:`~recallery.extraction.neighbours.near`), decided by
:func:`~recallery.extraction.reconcile.plan`, and judged by the caller's ``judge`` where it
takes judgement. Reads only; the caller writes the result in its own transaction."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from recallery.extraction.apply import Planned
from recallery.extraction.extractor import Candidate
from recallery.extraction.neighbours import near
from recallery.extraction.reconcile import Action, Decision, Thresholds, plan, repeats_earlier
from recallery.store.base import Store

#: Asked, with the candidate's index, where a decision takes judgement (``Action.JUDGE``);
#: answers the final decision.
Judge = Callable[[int, Candidate, Decision], Decision]
#: Told one line per item: what was decided, or that an in-call repeat was dropped.
Note = Callable[[str], None]
#: How the notes name candidate ``i`` (``semantic item 2``, ``entry 1``).
Label = Callable[[int, Candidate], str]


class Repeats(enum.Enum):
    """What becomes of a candidate repeating an earlier one of the same call."""

    DROP = "drop"
    """Left out, with a note (an extraction reply that says a fact twice)."""
    DUPLICATE = "duplicate"
    """Kept as a ``duplicate`` decision (an agent is told the outcome of each entry it sent)."""


def consolidate(
    store: Store,
    memory_id: str,
    user_id: str,
    candidates: Sequence[Candidate],
    vectors: NDArray[np.float32],
    *,
    judge: Judge,
    note: Note,
    label: Label,
    repeats: Repeats,
    thresholds: Thresholds,
) -> list[Planned]:
    """Each candidate's decision, in order (in-call repeats as ``repeats`` says), compared
    only with ``user_id``'s entries of the memory."""

    def cosine(a: int, b: int) -> float:
        return float(vectors[a] @ vectors[b])

    planned: list[Planned] = []
    for i, candidate in enumerate(candidates):
        name = label(i, candidate)
        if repeats_earlier(i, candidates, cosine, thresholds):
            if repeats is Repeats.DROP:
                note(f"{name}: repeats an earlier item; dropped")
                continue
            decision = Decision(Action.DUPLICATE, reason="repeats an earlier entry of the call")
            planned.append(Planned(candidate, vectors[i], decision, label=name))
            continue
        with store.read() as r:
            current, rejected = near(r, memory_id, user_id, candidate, vectors[i])
        decision = plan(candidate, current, rejected, thresholds)
        judged = decision.action is Action.JUDGE
        if judged:
            decision = judge(i, candidate, decision)
        item = Planned(candidate, vectors[i], decision, judged, name)
        note(item.log_line())
        planned.append(item)
    return planned


__all__ = ["Judge", "Label", "Note", "Repeats", "consolidate"]
