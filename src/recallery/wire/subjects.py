"""Data subjects outside the process: a data-subject request's receipt, both ways as JSON (REST
answers, the SDK) and as lines of text (the command line prints them), and a page of the
listing of users, agents or sessions (``subjects``, ``total_count``), each with its counts and
last activity. Times are ISO 8601."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from recallery.models import Page
from recallery.requests.subjects import (
    Changed,
    MemoryShare,
    Person,
    Refused,
    SubjectAction,
    SubjectKind,
    SubjectReceipt,
)
from recallery.wire.envelope import Json
from recallery.wire.times import iso, required_time

#: The list's key in a page of the listing (``GET /subjects``; the old ``GET /people``
#: answers the same page under ``people``).
ROWS = "subjects"


def subject_receipt_dict(r: SubjectReceipt) -> Json:
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


def subject_receipt_from_dict(d: Mapping[str, Any]) -> SubjectReceipt:
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


def person_dict(p: Person) -> Json:
    return {
        "kind": p.kind.value,
        "id": p.id,
        "facts": p.facts,
        "turns": p.turns,
        "entries": p.entries,
        "last_at": iso(p.last_at),
    }


def person_from_dict(d: Mapping[str, Any]) -> Person:
    return Person(
        kind=SubjectKind(d["kind"]),
        id=str(d["id"]),
        facts=int(d["facts"]),
        turns=int(d["turns"]),
        entries=int(d["entries"]),
        last_at=required_time(d["last_at"]),
    )


def subjects_page_dict(page: Page[Person], rows: str = ROWS) -> Json:
    """A page of the listing, its rows under ``rows``."""
    return {rows: [person_dict(p) for p in page.items], "total_count": page.total}


def subjects_page_from_dict(d: Mapping[str, Any], rows: str = ROWS) -> Page[Person]:
    return Page(tuple(person_from_dict(p) for p in d[rows]), int(d["total_count"]))


__all__ = [
    "ROWS",
    "SCRUB_DUE",
    "person_dict",
    "person_from_dict",
    "receipt_lines",
    "subject_receipt_dict",
    "subject_receipt_from_dict",
    "subjects_page_dict",
    "subjects_page_from_dict",
]
