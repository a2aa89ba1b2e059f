"""Typed inputs and results of engine operations: what adapters (REST, SDK, CLI, UI, MCP) build
and read. They live in the model layer, beside :mod:`recallery.models`, so a client can use them
without importing the engine; their defaults are written here and nowhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from datetime import datetime
from typing import Any

from recallery.models import Entry, EntryType, Fusion, Job, Trust
from recallery.providers.usage import Usage

#: The search defaults RAGFlow's REST API and SDK send (and every adapter takes from here).
DEFAULT_TOP_N = 5
DEFAULT_SIMILARITY_THRESHOLD = 0.2
DEFAULT_KEYWORD_WEIGHT = 0.7
DEFAULT_MAX_TOKENS = 2000
DEFAULT_FUSION = Fusion.BALANCED
"""How the keyword and vector legs are fused unless a caller says (every edge shows it)."""


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


@dataclass(frozen=True)
class SearchRequest:
    """A hybrid search: the query, the memories to search, and every knob and filter."""

    query: str
    memory_ids: tuple[str, ...]
    top_n: int = DEFAULT_TOP_N
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD
    keywords_similarity_weight: float = DEFAULT_KEYWORD_WEIGHT
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    types: frozenset[EntryType] | None = None
    valid_on: datetime | None = None
    as_of: datetime | None = None
    fusion: Fusion = DEFAULT_FUSION
    neighbour_weight: float | None = None
    """How much a raw turn borrows from its conversation neighbours' scores (None: settings)."""
    neighbour_span: int | None = None
    """How many turns on each side count as neighbours (None: settings; 0 turns it off)."""
    trust: frozenset[Trust] | None = None
    """Only entries in these trust states (None: any but rejected; rejected is never found)."""
    context_weight: float | None = None
    """How much a raw turn's conversation window (the turn with the turns written before it
    in its conversation) adds to its keyword score (None: settings; 0 turns it off)."""
    recency_weight: float | None = None
    """Time in the ranking: how much the latest of the best candidates gains over the earliest,
    in proportion to its own score, for a query that asks for the present (twice this: "now",
    "currently", "still") or the beginning (the earliest gains: "first", "originally") (None:
    the default; 0 turns it off)."""
    recency_plain: float | None = None
    """The share of that prior a query without a time cue gets (None: the default, none)."""
    context_length: int | None = None
    """Context that adapts: the length in characters up to which a raw turn takes all of its
    conversation context, longer ones in proportion (None: the default; 0: every turn all)."""
    supersession: float | None = None
    """Supersession of raw turns: a turn that supersedes a ranked one (a later turn of the
    same user restating one of its slots with a new value) is scored at least this share of
    the older one's score, 1 placing it just above (None: the default; 0 turns it off)."""


def _said(wire: str, arg: str, about: str) -> Any:
    """A filter field's declaration: its name in the REST query and the JSON bodies
    (``wire``), its keyword in the SDK and the engine (``arg``), and what it selects."""
    return field(default=None, metadata={"wire": wire, "arg": arg, "about": about})


@dataclass(frozen=True)
class MessageFilter:
    """Which raw turns of a memory the Messages list, the Messages page or a bulk change
    selects. ``None`` leaves a field unfiltered. Each field is declared once here, with its
    wire name and SDK keyword (:func:`message_filter_fields`); values are checked once, in
    the service that uses the filter."""

    agent_ids: frozenset[str] | None = _said("agent_id", "agent_ids", "turns of these agents")
    session_contains: str | None = _said(
        "keywords", "keywords", "session ids containing this text, any case"
    )
    session_id: str | None = _said("session_id", "session_id", "turns of this session")
    user_id: str | None = _said("user_id", "user_id", "turns of this user")
    types: frozenset[EntryType] | None = _said(
        "message_type", "types", "turns with a current extract of these types"
    )
    status: bool | None = _said("status", "status", "enabled (true) or disabled (false) turns")
    trust: frozenset[Trust] | None = _said("trust", "trust", "turns in these trust states")
    forgotten: bool | None = _said(
        "forgotten", "forgotten", "forgotten (true) or not forgotten (false) turns"
    )


def message_filter_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`MessageFilter` (``metadata``: wire, arg, about)."""
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
    "DEFAULT_KEYWORD_WEIGHT",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "DEFAULT_TOP_N",
    "MEMORY_UPDATABLE",
    "AddedEntries",
    "EntryInput",
    "EntryOutcome",
    "MessageFilter",
    "MessagePage",
    "SearchRequest",
    "TurnInput",
    "message_filter_fields",
]
