"""What is written and listed: conversation turns in, a page of them out, the Messages filter
(declared once, as the search's knobs are), entries an agent states and what became of them,
and the memory fields a caller may set."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from datetime import datetime
from typing import Any

from recallery.errors import InvalidInput
from recallery.models import Entry, EntryType, Job, Origin, Tombstone, Trust
from recallery.requests.usage import Usage


@dataclass(frozen=True)
class TurnInput:
    """One raw entry to write: a conversation turn's text and where it came from."""

    content: str
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    conversation_time: datetime | None = None


@dataclass(frozen=True)
class MessagePage:
    """A page of raw entries with the entries extracted from each and each turn's job."""

    items: tuple[Entry, ...]
    total: int
    extracted: Mapping[int, tuple[Entry, ...]]
    jobs: Mapping[int, Job]
    #: Retired versions extracted from each turn (replaced by a later fact or a correction).
    replaced: Mapping[int, tuple[Entry, ...]] = field(default_factory=dict)
    #: Tombstones of the entries the turns' jobs added or deduplicated into that were erased
    #: or evicted since, by entry id.
    gone: Mapping[int, Tombstone] = field(default_factory=dict)


def job_entry_ids(job: Job | None) -> dict[str, tuple[int, ...]]:
    """The entries an extraction job's result names, by what it did with each (``added``,
    ``deduped``: the entry the turn repeated, ``superseded``: the entry its fact replaced);
    empty for a job without them (unfinished, failed, or written before results named them)."""
    named = (job.result or {}).get("entry_ids") if job is not None else None
    if not isinstance(named, Mapping):
        return {}
    return {
        str(k): tuple(int(i) for i in ids if isinstance(i, int))
        for k, ids in named.items()
        if isinstance(ids, list | tuple)
    }


def said(wire: str, arg: str, kind: str, about: str) -> Any:
    """A filter field's declaration: its name in the REST query and the JSON bodies
    (``wire``), its keyword in the SDK (``arg``), the kind of value it takes (``kind``) and
    what it selects."""
    return field(default=None, metadata={"wire": wire, "arg": arg, "kind": kind, "about": about})


@dataclass(frozen=True)
class MessageFilter:
    """Which raw turns of a memory the Messages list, the Messages page or a bulk change
    selects. ``None`` leaves a field unfiltered. Each field is declared once here, with its
    wire name and SDK keyword (:func:`message_filter_fields`); values are checked once, in
    the service that uses the filter (an adapter builds one with :meth:`sent`)."""

    agent_ids: frozenset[str] | None = said(
        "agent_id", "agent_ids", "agents", "turns of these agents"
    )
    session_contains: str | None = said(
        "keywords", "keywords", "text", "session ids containing this text, any case"
    )
    session_id: str | None = said("session_id", "session_id", "text", "turns of this session")
    user_id: str | None = said("user_id", "user_id", "text", "turns of this user")
    types: frozenset[EntryType] | None = said(
        "message_type", "types", "types", "turns with a current extract of these types"
    )
    status: bool | None = said(
        "status", "status", "flag", "enabled (true) or disabled (false) turns"
    )
    trust: frozenset[Trust] | None = said("trust", "trust", "trust", "turns in these trust states")
    forgotten: bool | None = said(
        "forgotten", "forgotten", "flag", "forgotten (true) or not forgotten (false) turns"
    )
    origin: frozenset[Origin] | None = said(
        "origin", "origin", "origins", "turns that came about in these ways: conversation, import"
    )
    recorded_since: datetime | None = said(
        "recorded_since", "recorded_since", "time", "turns recorded at or after this time"
    )
    recorded_before: datetime | None = said(
        "recorded_before", "recorded_before", "time", "turns recorded before this time"
    )
    valid_since: datetime | None = said(
        "valid_since", "valid_since", "time", "turns whose conversation time is at or after this"
    )
    valid_before: datetime | None = said(
        "valid_before", "valid_before", "time", "turns whose conversation time is before this"
    )

    @classmethod
    def sent(cls, values: Mapping[str, Any], field_prefix: str = "") -> MessageFilter:
        """A filter of the values an adapter received, by wire name, as sent: the service
        checks each. A name no field has is refused (``field_prefix`` + the name)."""
        by_wire = {spec.metadata["wire"]: spec.name for spec in fields(cls)}
        unknown = sorted(set(values) - set(by_wire))
        if unknown:
            name = field_prefix + unknown[0]
            raise InvalidInput(name, f"Unknown filter field '{name}'.")
        return cls(**{by_wire[k]: v for k, v in values.items() if v is not None})


def message_filter_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`MessageFilter` (``metadata``: wire, arg, kind, about)."""
    return fields(MessageFilter)


@dataclass(frozen=True)
class EntryInput:
    """An entry an agent states directly (origin ``manual``): its text, its type (one the
    memory extracts: semantic, episodic or procedural) and when it holds (default: from now,
    open-ended). Reconciled like extraction's output (see ``Engine.add_entries``)."""

    content: str
    message_type: EntryType | str = EntryType.SEMANTIC
    valid_at: datetime | str | None = None
    invalid_at: datetime | str | None = None


@dataclass(frozen=True)
class EntryOutcome:
    """What became of one stated entry: ``action`` is ``add``, ``supersede`` (``target``
    retired in its favour), ``duplicate`` (``target`` already says it; no row added) or
    ``suppress`` (``target`` is a rejected entry that says it; dropped). ``message_id`` is
    the entry that now holds the fact (none when suppressed)."""

    index: int
    action: str
    message_id: int | None
    target: int | None
    reason: str


@dataclass(frozen=True)
class AddedEntries:
    """The result of ``Engine.add_entries``: one outcome per stated entry, in order, notes on
    how they were decided (a judgement made without a chat model, say), and what the chat
    model's judgements cost (also recorded with the memory's model costs)."""

    memory_id: str
    outcomes: tuple[EntryOutcome, ...]
    notes: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)

    def counts(self) -> dict[str, int]:
        """How many entries met each outcome."""
        actions = ("add", "supersede", "duplicate", "suppress")
        return {a: sum(o.action == a for o in self.outcomes) for a in actions}


#: Memory fields a caller may set at creation or change later (RAGFlow's update body).
MEMORY_UPDATABLE = (
    "name",
    "permissions",
    "llm_id",
    "embd_id",
    "memory_type",
    "memory_size",
    "forgetting_policy",
    "temperature",
    "avatar",
    "description",
    "system_prompt",
    "user_prompt",
)


__all__ = [
    "MEMORY_UPDATABLE",
    "AddedEntries",
    "EntryInput",
    "EntryOutcome",
    "MessageFilter",
    "MessagePage",
    "TurnInput",
    "message_filter_fields",
    "said",
]
