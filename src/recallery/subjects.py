"""The data-subject request path's shapes: what forgetting or erasing everything about one end
user (the ``user_id`` stored on entries) changes in each memory the caller may change, and
the memories it may not, as one receipt; and what the store holds about a user, agent or
session (a person's page). The operations are :mod:`recallery.services.subjects`'."""

from __future__ import annotations

import enum
import hashlib
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


def receipt_dict(r: SubjectReceipt) -> Json:
    return {
        "action": r.action.value,
        "user_id": r.user_id,
        "dry_run": r.dry_run,
        "count": r.count,
        "entries": r.entries,
        "cascade": r.cascade,
        "token": r.token,
        "memories": [
            {
                "memory_id": m.memory_id,
                "name": m.name,
                "tenant_id": m.tenant_id,
                "entries": list(m.entries),
                "cascade": list(m.cascade),
                "items": [
                    {
                        "message_id": c.message_id,
                        "user_id": c.user_id,
                        "why": c.why,
                        "origin": c.origin,
                    }
                    for c in m.items
                ],
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
        "scrubbed": r.scrubbed,
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
                tuple(
                    Changed(
                        int(c["message_id"]), str(c["user_id"]), str(c["why"]), int(c["origin"])
                    )
                    for c in m["items"]
                ),
                str(m.get("tenant_id", "")),
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
        scrubbed=bool(d.get("scrubbed", True)),
    )


#: What a receipt says when the erased text could not be scrubbed from the files yet.
SCRUB_DUE = (
    "The store's files still hold the erased text in old pages: another reader had them open. "
    "The store scrubs them as soon as that reader finishes (docs/security.md)."
)


def receipt_lines(r: SubjectReceipt) -> list[str]:
    """The receipt as lines of text (the command line prints them)."""
    verb = {SubjectAction.FORGET: "forget", SubjectAction.ERASE: "erase"}[r.action]
    head = "Dry run: would" if r.dry_run else "Done:"
    lines = [
        f"{head} {verb} {r.count} entries about user '{r.user_id}' "
        f"({r.entries} of theirs, {r.cascade} by cascade) in {len(r.memories)} "
        + ("memory." if len(r.memories) == 1 else "memories.")
    ]
    for m in r.memories:
        owner = f", tenant {m.tenant_id}" if m.tenant_id else ""
        lines.append(
            f"  {m.name} ({m.memory_id}{owner}): {len(m.entries)} entries, "
            f"{len(m.cascade)} by cascade"
        )
        lines += [
            f"    message {c.message_id}  user '{c.user_id}'  {c.why}"
            + ("" if c.origin == c.message_id else f" (of message {c.origin})")
            for c in m.items
        ]
    lines += [
        f"  untouched: {m.name} ({m.memory_id}) holds {m.held}; {m.reason}" for m in r.refused
    ]
    if not r.scrubbed:
        lines.append(SCRUB_DUE)
    if r.dry_run:
        lines.append(
            "Nothing changed; run again with --apply to make the change "
            f"(--token {r.token} applies exactly this list, or nothing)."
        )
    return lines


__all__ = [
    "SCRUB_DUE",
    "Changed",
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
