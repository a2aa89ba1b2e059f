"""The types of data subjects, the people entries are about: what forgetting or erasing
everything about one end user (the ``user_id`` stored on entries) changes in each memory the
caller may change, and the memories it may not, as one receipt; what the store holds about a
user, agent or session (a person's page); and the rows of their listing. The operations are
:mod:`recallery.services.subjects`'; the JSON shapes :mod:`recallery.wire.subjects`'.

One feature, one name: a *subject* is who entries are about (:class:`SubjectKind`), in every
layer (``GET /subjects``, ``list_subjects``, ``forget_subject``...); the web shows the
listing's rows (:class:`Person`) on its People page, its human title.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType


class SubjectAction(enum.StrEnum):
    """What a data-subject request does to every entry about the user."""

    FORGET = "forget"
    ERASE = "erase"


class SubjectKind(enum.StrEnum):
    """Who entries can be about: the end user, the agent, or the conversation."""

    USER = "user"
    AGENT = "agent"
    SESSION = "session"


@dataclass(frozen=True)
class Changed:
    """One entry a request changes (or would): whose it is and why it is included."""

    message_id: int
    user_id: str
    why: str
    """``own turn``, ``own entry``, ``derived`` (extracted from a turn of theirs) or ``older
    version`` (:class:`recallery.services.changes.Why`)."""
    origin: int
    """The entry it goes with: itself for an entry of the person, else the one it cascades
    from (a derived entry labelled with no user or another, a version)."""


@dataclass(frozen=True)
class MemoryShare:
    """One memory's part of a request: every entry it changes (or would), each with its user
    and why; ``entries`` are the person's own (stored with their user id), ``cascade`` what goes
    with them without carrying their id (an extract of their turn stored without a user)."""

    memory_id: str
    name: str
    items: tuple[Changed, ...]
    tenant_id: str = ""

    @property
    def entries(self) -> tuple[int, ...]:
        return tuple(c.message_id for c in self.items if c.origin == c.message_id)

    @property
    def cascade(self) -> tuple[int, ...]:
        return tuple(c.message_id for c in self.items if c.origin != c.message_id)

    @property
    def count(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class Refused:
    """A memory the caller can read that holds ``held`` entries of the user but that its key
    may not change (``reason``); the request leaves it untouched."""

    memory_id: str
    name: str
    held: int
    reason: str


@dataclass(frozen=True)
class SubjectReceipt:
    """What a request about ``user_id`` changed (or, for a dry run, would change)."""

    action: SubjectAction
    user_id: str
    dry_run: bool
    memories: tuple[MemoryShare, ...]
    refused: tuple[Refused, ...]
    at: datetime
    actor: str
    reason: str
    scrubbed: bool = True
    """For an applied erasure: whether the store's files are already clean of the erased text
    (False while a reader elsewhere holds old pages; the store completes it later)."""

    @property
    def entries(self) -> int:
        return sum(len(m.entries) for m in self.memories)

    @property
    def cascade(self) -> int:
        return sum(len(m.cascade) for m in self.memories)

    @property
    def count(self) -> int:
        return self.entries + self.cascade

    @property
    def token(self) -> str:
        """A digest of what the request changes in which memory: applying with a dry run's
        token changes exactly what it listed, or nothing (as a bulk change's token)."""
        text = "|".join(
            [self.action.value, self.user_id]
            + [
                f"{m.memory_id}:{','.join(str(c.message_id) for c in m.items)}"
                for m in self.memories
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class SubjectMemory:
    """What one memory holds about a subject: entries per type (every version, forgotten
    and disabled ones too)."""

    memory_id: str
    name: str
    counts: Mapping[EntryType, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class SubjectProfile:
    """A user's, agent's or session's page: counts per memory the caller may read, their
    newest current facts, and their entries per day recorded (oldest day first)."""

    kind: SubjectKind
    value: str
    memories: tuple[SubjectMemory, ...]
    facts: tuple[Entry, ...]
    days: tuple[datetime, ...]
    per_day: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(m.total for m in self.memories)


def subject_action(value: object) -> SubjectAction:
    try:
        return SubjectAction(str(value))
    except ValueError:
        raise InvalidInput("action", "action must be forget or erase.") from None


def subject_kind(value: object) -> SubjectKind:
    try:
        return SubjectKind(str(value))
    except ValueError:
        raise InvalidInput("kind", "kind must be user, agent or session.") from None


@dataclass(frozen=True)
class Person:
    """One id of ``kind`` across the memories the caller may read (a row of the People
    listing): ``facts``, its current extracted entries (every state but retired); ``turns``,
    its raw turns (every version); ``entries``, everything stored under it; ``last_at``, its
    newest record time."""

    kind: SubjectKind
    id: str
    facts: int
    turns: int
    entries: int
    last_at: datetime


__all__ = [
    "Changed",
    "MemoryShare",
    "Person",
    "Refused",
    "SubjectAction",
    "SubjectKind",
    "SubjectMemory",
    "SubjectProfile",
    "SubjectReceipt",
    "subject_action",
    "subject_kind",
]
