"""How the LangGraph store reads: items from raw turns, and a batch's gets, searches and
namespace listings served from one listing of the memory (pure functions over plain data;
:mod:`recallery.integrations.langgraph` documents the mapping)."""

from __future__ import annotations

from recallery.extras import require

require("langgraph", extra="langgraph", what="recallery.integrations.langgraph")

import json  # noqa: E402
from collections.abc import Iterable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

from langgraph.store.base import (  # noqa: E402
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
)

from recallery.integrations.base import turn_parts  # noqa: E402
from recallery.integrations.matching import (  # noqa: E402
    Namespace,
    literal_prefix,
    matches,
    namespace_matches,
)
from recallery.models import Entry  # noqa: E402
from recallery.validation import MAX_ID_TEXT  # noqa: E402

Key = tuple[str, str]  # an item's agent_id and session_id
#: The live turns of each key the batch may touch, newest first.
Held = dict[Key, list[Entry]]


#: An entry's score for each query (and the agent it searched), by message id.
Scores = dict[int, float]


def key_of(namespace: Namespace, key: str) -> Key:
    """An item's (agent_id, session_id); the session is empty when no item can have it."""
    return agent_id(namespace), session_id(namespace, key) or ""


def reach(op: Op) -> Namespace:
    """The namespace an operation reads or writes under."""
    if isinstance(op, (GetOp, PutOp)):
        return op.namespace
    if isinstance(op, SearchOp):
        return op.namespace_prefix
    assert isinstance(op, ListNamespacesOp)
    conditions = op.match_conditions or ()
    prefixes = [literal_prefix(c.path) for c in conditions if c.match_type == "prefix"]
    return max(prefixes, key=len, default=())


def common(spaces: Sequence[Namespace]) -> Namespace:
    first = spaces[0]
    n = len(first)
    for space in spaces[1:]:
        n = next(
            (i for i, (a, b) in enumerate(zip(first[:n], space, strict=False)) if a != b),
            min(n, len(space)),
        )
    return first[:n]


def by_key(found: Iterable[Entry]) -> Held:
    held: Held = {}
    for entry in sorted(found, key=_recency, reverse=True):
        held.setdefault((entry.agent_id, entry.session_id), []).append(entry)
    return held


def _items(held: Held, prefix: Namespace) -> list[tuple[Entry, Item]]:
    """The items under ``prefix``, each from its key's newest turn, most recent first."""
    out = []
    for entries in held.values():
        item = item_of(entries[0])
        if item is not None and item.namespace[: len(prefix)] == prefix:
            out.append((entries[0], item))
    return sorted(out, key=lambda pair: _recency(pair[0]), reverse=True)


def newest_item(held: Held, namespace: Namespace, key: str) -> Item | None:
    entries = held.get(key_of(namespace, key))
    item = item_of(entries[0]) if entries else None
    return item if item is not None and item.namespace == namespace else None


def found_by(op: SearchOp, held: Held) -> list[tuple[Entry, Item]]:
    return [(e, i) for e, i in _items(held, op.namespace_prefix) if matches(i.value, op.filter)]


def search_of(op: SearchOp, held: Held, ranked: dict[tuple[str, str], Scores]) -> list[SearchItem]:
    kept = found_by(op, held)
    scores: Scores = {}
    if op.query and kept:
        spaces = {i.namespace for _, i in kept}
        agent = agent_id(next(iter(spaces))) if len(spaces) == 1 else ""
        scored = {e.message_id for e, _ in kept if indexed(e)}
        scores = {m: s for m, s in ranked[(op.query, agent)].items() if m in scored}
        kept.sort(key=lambda pair: -scores.get(pair[0].message_id, -1.0))
    page = kept[op.offset : op.offset + op.limit]
    return [_search_item(i, scores.get(e.message_id)) for e, i in page]


def namespaces_of(op: ListNamespacesOp, held: Held) -> list[tuple[str, ...]]:
    conditions = op.match_conditions or ()
    spaces = {
        i.namespace
        for _, i in _items(held, ())
        if all(namespace_matches(c.match_type, c.path, i.namespace) for c in conditions)
    }
    if op.max_depth is not None:
        spaces = {ns[: op.max_depth] for ns in spaces}
    return sorted(spaces)[op.offset : op.offset + op.limit]


def indexed(entry: Entry) -> bool:
    """Whether the item was put with an index (its value on the user's side of the turn)."""
    parts = turn_parts(entry.content)
    return parts is not None and bool(parts[0])


def agent_id(namespace: Namespace) -> str:
    """A namespace as recallery's ``agent_id``: its labels joined by ``.``."""
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label:
            raise InvalidNamespaceError(
                f"Namespace labels must be non-empty strings without periods: {namespace!r}"
            )
    return ".".join(namespace)


def session_id(namespace: Namespace, key: str) -> str | None:
    """A key as recallery's ``session_id`` (None when no item can have it: the namespace is
    empty, or the two are too long)."""
    if not namespace:
        return None
    session = f"{agent_id(namespace)}.{key}"
    return session if len(session.encode()) <= MAX_ID_TEXT else None


def item_of(entry: Entry) -> Item | None:
    """The item a turn holds, or None when it holds none."""
    parts = turn_parts(entry.content)
    namespace, dot = entry.agent_id, f"{entry.agent_id}."
    if parts is None or bool(parts[0]) == bool(parts[1]):
        return None
    if not namespace or not entry.session_id.startswith(dot):
        return None
    try:
        value = json.loads(parts[0] or parts[1])
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return Item(
        value=value,
        key=entry.session_id.removeprefix(dot),
        namespace=tuple(namespace.split(".")),
        created_at=entry.valid_at,
        updated_at=entry.recorded_at,
    )


def _recency(entry: Entry) -> tuple[Any, int]:
    return entry.recorded_at, entry.message_id


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, score)


__all__ = [
    "Held",
    "Key",
    "Scores",
    "agent_id",
    "by_key",
    "common",
    "found_by",
    "indexed",
    "item_of",
    "key_of",
    "namespaces_of",
    "newest_item",
    "reach",
    "search_of",
    "session_id",
]
