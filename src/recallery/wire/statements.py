"""Entries stated by agents: what the server answers to ``POST /memories/{id}/entries``, and
how the SDK reads it back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallery.requests import AddedEntries, EntryOutcome
from recallery.requests.usage import Usage
from recallery.wire.envelope import Json


def added_dict(a: AddedEntries) -> Json:
    return {
        "memory_id": a.memory_id,
        "counts": a.counts(),
        "outcomes": [
            {
                "index": o.index,
                "action": o.action,
                "message_id": o.message_id,
                "target": o.target,
                "reason": o.reason,
            }
            for o in a.outcomes
        ],
        "notes": list(a.notes),
        **a.usage.result(),
    }


def added_from_dict(d: Mapping[str, Any]) -> AddedEntries:
    return AddedEntries(
        memory_id=d["memory_id"],
        outcomes=tuple(
            EntryOutcome(
                index=int(o["index"]),
                action=o["action"],
                message_id=o.get("message_id"),
                target=o.get("target"),
                reason=o.get("reason", ""),
            )
            for o in d["outcomes"]
        ),
        notes=tuple(d.get("notes") or ()),
        usage=Usage.from_result(d),
    )


__all__ = ["added_dict", "added_from_dict"]
