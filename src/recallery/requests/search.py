"""The search request: every knob and filter of a hybrid search declared once, with its
default, wire name, kind of value and description (every edge derives from these), and the
context block a search becomes."""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from datetime import datetime
from typing import Any

from recallery.models import EntryType, Fusion, Origin, Trust

#: The search defaults RAGFlow's REST API and SDK send (and every adapter takes from here).
DEFAULT_TOP_N = 5
DEFAULT_SIMILARITY_THRESHOLD = 0.2
DEFAULT_KEYWORD_WEIGHT = 0.7
DEFAULT_MAX_TOKENS = 2000
DEFAULT_FUSION = Fusion.BALANCED
"""How the keyword and vector legs are fused unless a caller says (every edge shows it)."""


def _knob(default: Any, wire: str, kind: str, about: str) -> Any:
    """A search field's declaration: its default, its name in the REST query and bodies and
    in RAGFlow (``wire``), the kind of value it takes (``kind``: how every edge documents,
    reads and sends it) and what it does (``about``, the text every edge shows)."""
    return field(default=default, metadata={"wire": wire, "kind": kind, "about": about})


def _needed(wire: str, kind: str, about: str) -> Any:
    """A search field every request sends (no default)."""
    return field(metadata={"wire": wire, "kind": kind, "about": about})


#: Time in the ranking, off unless a caller asks (see :class:`SearchRequest`).
DEFAULT_RECENCY_WEIGHT = 0.0
DEFAULT_RECENCY_PLAIN = 0.0
#: Time orders the band of a question about the present, on: among the first ten candidates,
#: those scoring at least 0.3 of the best, and close to it by their vectors, come latest first.
#: Only the order of the first ten changes, so recall at ten does not (benchmarks/README.md,
#: current first).
DEFAULT_RECENCY_BAND = 0.7
#: Context that adapts, at 400 characters: a longer raw turn takes less of its conversation
#: context the longer it is ((400 / length)²), so on-topic neighbours no longer lift a long
#: chat turn above the one that holds the fact. It lifts the updated turn's R@10 on the
#: current-fact sets from 87.5/83.3 to 91.7/87.5 (the naive hybrid: 85.4/87.5), and with
#: replies twice as long from 77.1/83.3 to 91.7/89.6 (naive: 89.6/85.4), at LoCoMo R@10
#: 78.7 -> 78.5; the store keeps the lengths in memory, so it costs the search at 100k
#: entries about 2 % (benchmarks/README.md, current first).
DEFAULT_CONTEXT_LENGTH = 400
#: Supersession of raw turns, on: a later turn of the same user restating a ranked turn's slot
#: with a new value ranks just above it. Through REST on LoCoMo it changes R@10 by nothing
#: (78.7; 1-5 80.6, 6-10 76.8 -> 76.7) and MADial by nothing (75.8), and lifts the later
#: statement first on contradictions from 44-52 % to 100 %, the latest move from 0 to 38-44 %
#: and the updated turn from 4-13 % to 25-38 % (benchmarks/README.md, current first).
DEFAULT_SUPERSESSION = 1.0


@dataclass(frozen=True)
class Context:
    """A prompt-ready block of the best entries, fenced as data: its ``text``, the entries
    it holds (best first), its size in ``tokens`` and whether entries were left out to fit
    the budget (``truncated``). Built by :func:`recallery.retrieval.context.assemble`."""

    text: str
    message_ids: tuple[int, ...]
    tokens: int
    truncated: bool


@dataclass(frozen=True)
class SearchRequest:
    """A hybrid search: the query, the memories to search, and every knob and filter.

    Each field is declared once here, with its default, wire name, kind of value and
    description (:func:`search_fields`); the REST query parameters and body, the OpenAPI
    schema, the SDK's arguments and the docs are derived from these declarations, and the
    search service checks every value once. A knob whose default is ``None`` takes the
    server's setting."""

    query: str = _needed("query", "query", "What to look for.")
    memory_ids: tuple[str, ...] = _needed("memory_id", "memories", "The memories to search.")
    top_n: int = _knob(DEFAULT_TOP_N, "top_n", "size", "How many results at most (1-100).")
    similarity_threshold: float = _knob(
        DEFAULT_SIMILARITY_THRESHOLD,
        "similarity_threshold",
        "unit",
        "The least fused score a result needs.",
    )
    keywords_similarity_weight: float = _knob(
        DEFAULT_KEYWORD_WEIGHT,
        "keywords_similarity_weight",
        "unit",
        "How much the keyword side weighs against the vector side.",
    )
    user_id: str | None = _knob(None, "user_id", "id", "Only this user's entries (exact).")
    agent_id: str | None = _knob(None, "agent_id", "id", "Only this agent's entries (exact).")
    session_id: str | None = _knob(
        None, "session_id", "id", "Only this conversation's entries (exact)."
    )
    types: frozenset[EntryType] | None = _knob(
        None, "message_type", "types", "Only entries of these types (default: every type)."
    )
    valid_on: datetime | None = _knob(
        None, "valid_on", "time", "What was true at this time (default: now)."
    )
    as_of: datetime | None = _knob(
        None, "as_of", "time", "What the store knew at this time (default: now)."
    )
    fusion: Fusion = _knob(
        DEFAULT_FUSION, "fusion", "fusion", "How the keyword and vector legs are fused."
    )
    neighbour_weight: float | None = _knob(
        None,
        "neighbour_weight",
        "unit",
        "How much a raw turn borrows from its conversation neighbours' scores "
        "(default: the server's setting, 0.4 unless configured; 0 turns it off).",
    )
    neighbour_span: int | None = _knob(
        None,
        "neighbour_span",
        "span",
        "How many turns on each side count as neighbours "
        "(default: the server's setting, 2 unless configured; 0 turns it off).",
    )
    trust: frozenset[Trust] | None = _knob(
        None,
        "trust",
        "trust",
        "Only entries in these trust states: unreviewed, confirmed (default: both; "
        "rejected entries are never found).",
    )
    context_weight: float | None = _knob(
        None,
        "context_weight",
        "unit",
        "How much a raw turn's conversation window (the turn with the turns written before "
        "it) adds to its keyword score (default: the server's setting, 1 unless configured; "
        "0 turns it off).",
    )
    recency_weight: float = _knob(
        DEFAULT_RECENCY_WEIGHT,
        "recency_weight",
        "unit",
        "Time in the ranking: how much the latest of the best candidates gains over the "
        "earliest, in proportion to its own score, for a query that asks for the present "
        "(twice this: 'now', 'currently', 'still') or the beginning (the earliest gains: "
        "'first', 'originally'); 0 turns it off.",
    )
    recency_plain: float = _knob(
        DEFAULT_RECENCY_PLAIN,
        "recency_plain",
        "unit",
        "The share of that prior a query without a time cue gets.",
    )
    recency_band: float = _knob(
        DEFAULT_RECENCY_BAND,
        "recency_band",
        "unit",
        "Time orders the band: for one short question that asks for the present ('now', "
        "'currently', or about the asker in the present tense: 'where do I live?'), those of "
        "the first ten candidates scoring within this share below the best, and whose cosine "
        "lies at least half-way from the candidates' mean to the best, are put latest first "
        "(earliest first for 'first', 'originally'), each person's among that person's own "
        "places; only their order changes, each keeps its score (0 turns it off).",
    )
    context_length: int = _knob(
        DEFAULT_CONTEXT_LENGTH,
        "context_length",
        "length",
        "Context that adapts: the length in characters up to which a raw turn takes all of "
        "its conversation context; a longer one takes (this / its length)² of it, a turn "
        "twice as long a quarter (0: every turn all of it).",
    )
    supersession: float = _knob(
        DEFAULT_SUPERSESSION,
        "supersession",
        "unit",
        "Supersession of raw turns: a later turn of the same user restating one of a ranked "
        "turn's slots with a new value is scored at least this share of the older one's "
        "score, 1 placing it just above (0 turns it off); where the older turn states more "
        "than that slot, only for a question about the statement replaced. A query about the "
        "past ('first', 'back when', 'in 2019') is left as ranked.",
    )
    origin: frozenset[Origin] | None = _knob(
        None,
        "origin",
        "origins",
        "Only entries that came about in these ways: conversation (a turn), extraction, "
        "correction, import, manual (stated by an agent) (default: any).",
    )
    explain: bool = _knob(
        False,
        "explain",
        "flag",
        "Return with each hit its score's contributions by ranking stage (keyword, window, "
        "vector, neighbours, recency, supersession, time_band), which add up to its score "
        "(search only: the context block has no scores).",
    )


def search_fields() -> tuple[Field[Any], ...]:
    """The declared fields of :class:`SearchRequest` (``metadata``: wire, kind, about)."""
    return fields(SearchRequest)


def search_knobs() -> tuple[Field[Any], ...]:
    """The declared fields a caller may leave out: every one but the query and memories."""
    return fields(SearchRequest)[2:]


__all__ = [
    "DEFAULT_CONTEXT_LENGTH",
    "DEFAULT_FUSION",
    "DEFAULT_KEYWORD_WEIGHT",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_RECENCY_BAND",
    "DEFAULT_RECENCY_PLAIN",
    "DEFAULT_RECENCY_WEIGHT",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "DEFAULT_SUPERSESSION",
    "DEFAULT_TOP_N",
    "Context",
    "SearchRequest",
    "search_fields",
    "search_knobs",
]
