"""What a query may see: one filter object, turned into SQL in one place for every backend."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from recallery.clock import to_epoch
from recallery.models import EntryType, Origin, Scope, Trust

Adder = Callable[..., None]


@dataclass(frozen=True)
class EntryFilter:
    """Conditions every backend applies inside its own query (never after it).

    The defaults describe a listing (everything current); :meth:`retrieval` describes what
    search returns: enabled, not forgotten, not rejected, current and valid at ``valid_on``.
    With ``as_of`` the record clock moves back: an entry counts when it was recorded by then
    and not yet retired or forgotten at that time.
    """

    types: frozenset[EntryType] | None = None
    user_id: str | None = None
    agent_ids: frozenset[str] | None = None
    session_id: str | None = None
    session_contains: str | None = None
    content_contains: str | None = None
    """Entries whose text contains this, any case (a scan: for listings, never for search)."""
    message_ids: frozenset[int] | None = None
    source_ids: frozenset[int] | None = None
    enabled_only: bool = False
    disabled_only: bool = False
    hide_forgotten: bool = False
    forgotten_only: bool = False
    hide_rejected: bool = False
    trust: frozenset[Trust] | None = None
    current_only: bool = True
    valid_on: datetime | None = None
    as_of: datetime | None = None
    extracted_types: frozenset[EntryType] | None = None
    """Entries from which a current entry of one of these types was extracted."""
    recorded_since: datetime | None = None
    recorded_before: datetime | None = None
    origins: frozenset[Origin] | None = None
    """Entries that came about in one of these ways (a turn, extraction, an import ...)."""
    valid_since: datetime | None = None
    """Entries valid from this time on or later (``valid_at`` at or after it)."""
    valid_before: datetime | None = None

    @classmethod
    def retrieval(
        cls,
        *,
        valid_on: datetime,
        as_of: datetime | None = None,
        types: frozenset[EntryType] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        trust: frozenset[Trust] | None = None,
        origins: frozenset[Origin] | None = None,
    ) -> EntryFilter:
        return cls(
            types=types,
            trust=trust,
            origins=origins,
            user_id=user_id,
            agent_ids=frozenset({agent_id}) if agent_id is not None else None,
            session_id=session_id,
            enabled_only=True,
            hide_forgotten=True,
            hide_rejected=True,
            current_only=True,
            valid_on=valid_on,
            as_of=as_of,
        )


def _escape_like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _marks(n: int) -> str:
    return ",".join("?" * n)


def where_clause(
    scope: Scope,
    f: EntryFilter,
    alias: str = "e",
    *,
    id_array: bool = False,
    heap: Collection[str] = (),
) -> tuple[str, list[object]]:
    """SQL (with ``?`` placeholders) selecting entries of ``scope`` that pass ``f``.
    ``id_array``: ``f.message_ids`` as one array parameter (PostgreSQL's ``= ANY``), one
    statement text whatever their number, instead of a placeholder each. ``heap``: identity
    columns (``memory_id``, ``user_id``) checked on the rows a statement reads, never
    through an index: each is compared as an expression no index holds (``memory_id ||
    ''``), where the caller knows an index would cost more than it saves."""
    p = f"{alias}." if alias else ""
    sql: list[str] = []
    params: list[object] = []

    def add(condition: str, *values: object) -> None:
        sql.append(condition)
        params.extend(values)

    _identity_terms(add, p, scope, f, id_array, frozenset(heap))
    _state_terms(add, p, f)
    _time_terms(add, p, f)
    return " AND ".join(sql), params


def _in(add: Adder, column: str, values: Iterable[object]) -> None:
    items = sorted(values)  # type: ignore[type-var]
    add(f"{column} IN ({_marks(len(items))})", *items)


def _column(p: str, name: str, heap: frozenset[str]) -> str:
    """A column as the statement compares it: as an expression no index holds where ``heap``
    names it."""
    return f"({p}{name} || '')" if name in heap else f"{p}{name}"


def _identity_terms(
    add: Adder, p: str, scope: Scope, f: EntryFilter, id_array: bool, heap: frozenset[str]
) -> None:
    _in(add, _column(p, "memory_id", heap), scope.memory_ids)
    if f.types is not None:
        _in(add, f"{p}message_type", (t.value for t in f.types))
    if f.user_id is not None:
        add(f"{_column(p, 'user_id', heap)} = ?", f.user_id)
    if f.agent_ids is not None:
        _in(add, f"{p}agent_id", f.agent_ids)
    if f.session_id is not None:
        add(f"{p}session_id = ?", f.session_id)
    if f.session_contains:
        pattern = f"%{_escape_like(f.session_contains.lower())}%"
        add(f"lower({p}session_id) LIKE ? ESCAPE '!'", pattern)
    if f.content_contains:
        pattern = f"%{_escape_like(f.content_contains.lower())}%"
        add(f"lower({p}content) LIKE ? ESCAPE '!'", pattern)
    if f.message_ids is not None and id_array:
        add(f"{p}message_id = ANY(?::bigint[])", sorted(f.message_ids))
    elif f.message_ids is not None:
        _in(add, f"{p}message_id", f.message_ids)
    if f.source_ids is not None:
        _in(add, f"{p}source_id", f.source_ids)
    if f.origins is not None:
        _in(add, f"{p}origin", (o.value for o in f.origins))
    if f.extracted_types is not None:
        kinds = sorted(t.value for t in f.extracted_types)
        add(
            "EXISTS (SELECT 1 FROM entries sub WHERE sub.source_id = "
            f"{p}message_id AND sub.retired_at IS NULL "
            f"AND sub.message_type IN ({_marks(len(kinds))}))",
            *kinds,
        )


def _state_terms(add: Adder, p: str, f: EntryFilter) -> None:
    if f.enabled_only:
        add(f"{p}status = 1")
    if f.disabled_only:
        add(f"{p}status = 0")
    if f.hide_rejected:
        add(f"{p}trust <> 'rejected'")
    if f.trust is not None:
        _in(add, f"{p}trust", (t.value for t in f.trust))
    if f.as_of is None:
        if f.current_only:
            add(f"{p}retired_at IS NULL")
        if f.hide_forgotten:
            add(f"{p}forget_at IS NULL")
    else:
        t = to_epoch(f.as_of)
        add(f"{p}recorded_at <= ?", t)
        if f.current_only:
            add(f"({p}retired_at IS NULL OR {p}retired_at > ?)", t)
        if f.hide_forgotten:
            add(f"({p}forget_at IS NULL OR {p}forget_at > ?)", t)
    if f.forgotten_only:
        add(f"{p}forget_at IS NOT NULL")


def _time_terms(add: Adder, p: str, f: EntryFilter) -> None:
    if f.recorded_since is not None:
        add(f"{p}recorded_at >= ?", to_epoch(f.recorded_since))
    if f.recorded_before is not None:
        add(f"{p}recorded_at < ?", to_epoch(f.recorded_before))
    if f.valid_since is not None:
        add(f"{p}valid_at >= ?", to_epoch(f.valid_since))
    if f.valid_before is not None:
        add(f"{p}valid_at < ?", to_epoch(f.valid_before))
    if f.valid_on is not None:
        v = to_epoch(f.valid_on)
        add(f"{p}valid_at <= ?", v)
        add(f"({p}invalid_at IS NULL OR {p}invalid_at > ?)", v)
