"""The data-subject request path's shapes: what forgetting or erasing everything about one end
user (the ``user_id`` stored on entries) changes in each memory the caller may change, and
the memories it may not, as one receipt; and what the store holds about a user, agent or
session (a person's page). The operations are :mod:`recallery.services.subjects`'."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType

Json = dict[str, Any]


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
class MemoryShare:
    """One memory's part of a request: the user's own ``entries`` it changes (or would) and
    the ``cascade``, entries changed because they derive from those (extracts of a turn, and,
    for an erasure, every version of an entry)."""

    memory_id: str
    name: str
    entries: tuple[int, ...]
    cascade: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.entries) + len(self.cascade)


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

    @property
    def entries(self) -> int:
        return sum(len(m.entries) for m in self.memories)

    @property
    def cascade(self) -> int:
        return sum(len(m.cascade) for m in self.memories)

    @property
    def count(self) -> int:
        return self.entries + self.cascade


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


def receipt_dict(r: SubjectReceipt) -> Json:
    return {
        "action": r.action.value,
        "user_id": r.user_id,
        "dry_run": r.dry_run,
        "count": r.count,
        "entries": r.entries,
        "cascade": r.cascade,
        "memories": [
            {
                "memory_id": m.memory_id,
                "name": m.name,
                "entries": list(m.entries),
                "cascade": list(m.cascade),
            }
            for m in r.memories
        ],
        "refused": [
            {"memory_id": m.memory_id, "name": m.name, "held": m.held, "reason": m.reason}
            for m in r.refused
        ],
        "at": r.at.isoformat(),
        "actor": r.actor,
        "reason": r.reason,
    }


def receipt_from_dict(d: Mapping[str, Any]) -> SubjectReceipt:
    return SubjectReceipt(
        action=SubjectAction(d["action"]),
        user_id=str(d["user_id"]),
        dry_run=bool(d["dry_run"]),
        memories=tuple(
            MemoryShare(
                str(m["memory_id"]),
                str(m["name"]),
                tuple(int(i) for i in m["entries"]),
                tuple(int(i) for i in m["cascade"]),
            )
            for m in d["memories"]
        ),
        refused=tuple(
            Refused(str(m["memory_id"]), str(m["name"]), int(m["held"]), str(m["reason"]))
            for m in d["refused"]
        ),
        at=datetime.fromisoformat(d["at"]),
        actor=str(d["actor"]),
        reason=str(d["reason"]),
    )


def receipt_lines(r: SubjectReceipt) -> list[str]:
    """The receipt as lines of text (the command line prints them)."""
    verb = {SubjectAction.FORGET: "forget", SubjectAction.ERASE: "erase"}[r.action]
    head = "Dry run: would" if r.dry_run else "Done:"
    lines = [
        f"{head} {verb} {r.count} entries about user '{r.user_id}' "
        f"({r.entries} of theirs, {r.cascade} by cascade) in {len(r.memories)} memories."
    ]
    lines += [
        f"  {m.name} ({m.memory_id}): {len(m.entries)} entries, {len(m.cascade)} by cascade"
        for m in r.memories
    ]
    lines += [
        f"  untouched: {m.name} ({m.memory_id}) holds {m.held}; {m.reason}" for m in r.refused
    ]
    if r.dry_run:
        lines.append("Nothing changed; run again with --apply to make the change.")
    return lines


__all__ = [
    "MemoryShare",
    "Refused",
    "SubjectAction",
    "SubjectKind",
    "SubjectMemory",
    "SubjectProfile",
    "SubjectReceipt",
    "receipt_dict",
    "receipt_from_dict",
    "receipt_lines",
    "subject_action",
    "subject_kind",
]
