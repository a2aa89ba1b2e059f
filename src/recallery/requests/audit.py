"""The audit log's filters, declared once in :class:`AuditFilter` as the Messages and Facts
filters are: GET /audit's query parameters and OpenAPI, the SDK's keywords and the bound
engine's come from its fields. The events are :class:`~recallery.models.AuditEvent`; the
JSON shapes :mod:`recallery.wire`'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, fields
from datetime import datetime
from typing import Any

from recallery.errors import InvalidInput
from recallery.requests.messages import said


@dataclass(frozen=True)
class AuditFilter:
    """Which audit events the audit log lists (always only of memories the caller can read).
    ``None`` leaves a field unfiltered. Each field is declared once here, with its wire name
    and SDK keyword (:func:`audit_filter_fields`); values are checked by the service."""

    memory_id: str | None = said("memory_id", "memory_id", "memory", "Events of this memory.")
    message_id: int | str | None = said(
        "message_id", "message_id", "message", "Events of this message (entry) id."
    )
    actor_id: str | None = said("actor", "actor_id", "free", "Events by this user id (exact).")
    action: str | None = said(
        "action", "action", "free", "Events of this action, e.g. entry.forget (exact)."
    )
    since: datetime | str | None = said(
        "since", "since", "time", "Events at or after this time (ISO 8601; naive means UTC)."
    )
    until: datetime | str | None = said(
        "until", "until", "time", "Events before this time (ISO 8601; naive means UTC)."
    )

    @classmethod
    def sent(cls, values: Mapping[str, Any]) -> AuditFilter:
        """A filter of the values an adapter received, by wire name, as sent (a name no
        field has is refused, naming it)."""
        by_wire = {spec.metadata["wire"]: spec.name for spec in fields(cls)}
        unknown = sorted(set(values) - set(by_wire))
        if unknown:
            raise InvalidInput(unknown[0], f"Unknown filter field '{unknown[0]}'.")
        return cls(**{by_wire[k]: v for k, v in values.items() if v is not None})


def audit_filter_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`AuditFilter` (``metadata``: wire, arg, kind, about)."""
    return fields(AuditFilter)


__all__ = ["AuditFilter", "audit_filter_fields"]
