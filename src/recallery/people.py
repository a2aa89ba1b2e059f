"""The People listing's shapes: each end user, agent or session (the ids stored on entries)
that the memories a caller may read hold, with how many current facts and turns are theirs
and when the store last recorded something of theirs. The operation is
:mod:`recallery.services.people`'; a person's own page is :mod:`recallery.subjects`'."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from recallery.subjects import SubjectKind


@dataclass(frozen=True)
class Person:
    """One id of ``kind`` across the memories the caller may read: ``facts``, its current
    extracted entries (every state but retired); ``turns``, its raw turns (every version);
    ``entries``, everything stored under it; ``last_at``, its newest record time."""

    kind: SubjectKind
    id: str
    facts: int
    turns: int
    entries: int
    last_at: datetime


__all__ = ["Person"]
