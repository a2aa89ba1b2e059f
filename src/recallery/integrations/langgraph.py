"""A LangGraph store (``langgraph.store.base.BaseStore``) in one recallery memory.

::

    from recallery import Client
    from recallery.integrations.langgraph import RecalleryStore

    store = RecalleryStore(Client(url, api_key=key), memory_id)
    store.put(("memories", "u-42"), "home", {"text": "The user lives in Berlin"})
    store.search(("memories", "u-42"), query="where does the user live?")
    graph = builder.compile(store=store)            # tools and nodes get it as `store`

How items map onto recallery: an item is a raw turn of the store's memory whose user input
is the value as JSON (the agent response stays empty), with ``agent_id`` the namespace's
labels joined by ``.`` (LangGraph forbids ``.`` in a label) and ``session_id`` that, a ``.``
and the key; namespace and key together take at most 255 bytes. ``created_at`` is the turn's
valid time (kept across puts, to the second), ``updated_at`` its record time.

- ``get`` and ``put`` find a key exactly; ``put`` replaces: with ``erase=True`` (the default;
  the memory owner's key with ``manage``) the new turn is written and the old one erased for
  good; with ``erase=False`` (a key that may only read and write) it is corrected, and the old
  value stays in the entry's history, retired. ``put`` with ``None`` and ``delete`` erase or,
  with ``erase=False``, forget. Either way the old vector never ranks again. (A replacing
  ``put`` writes the new turn before it removes the old one, so a key that may not erase is
  refused with the new value in place.)
- ``search`` without a query lists the items under the namespace prefix that pass the filter,
  most recently updated first. With a query it ranks them by recallery's hybrid search
  (keywords and vectors) over the prefix's only namespace, or over the memory when the prefix
  holds several; it scores the best 100 of them and lists the rest after, unscored (as
  LangGraph's stores list items without a vector). Filters: equality, nested values and
  ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``.
- ``list_namespaces`` takes prefix and suffix conditions with ``*``, ``max_depth``, ``limit``
  and ``offset``.
- recallery indexes every item's whole value, so ``put(index=...)`` is accepted and ignored,
  as a LangGraph store without an index configuration does; TTLs are not supported.

A turn that is disabled, forgotten or rejected by a person is not an item, nor one whose text
no longer holds a JSON object; a memory used as a store is best kept for the store (a raw-only
memory: nothing is extracted). The memory's budget applies: its forgetting policy may evict
items. ``batch`` needs a :class:`recallery.Client`; ``abatch`` takes either client.
"""

from __future__ import annotations

from recallery.extras import require

require("langgraph", "httpx", extra="langgraph", what="recallery.integrations.langgraph")

import json  # noqa: E402
from collections.abc import Iterable, Mapping  # noqa: E402
from typing import Any  # noqa: E402

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from recallery.errors import InvalidInput  # noqa: E402
from recallery.integrations.base import (  # noqa: E402
    AnyClient,
    Plan,
    arun,
    live,
    remove,
    run,
    turn_parts,
    turn_text,
    turns,
)
from recallery.integrations.matching import (  # noqa: E402
    Namespace,
    literal_prefix,
    matches,
    namespace_matches,
)
from recallery.models import Entry  # noqa: E402
from recallery.validation import MAX_ID_TEXT, MAX_TOP_N  # noqa: E402

Key = tuple[Namespace, str]


class RecalleryStore(BaseStore):
    """LangGraph's store over one memory, through the SDK (see the module's documentation)."""

    def __init__(self, client: AnyClient, memory_id: str, *, erase: bool = True) -> None:
        self.client = client
        self.memory_id = memory_id
        self.erase = erase

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return run(self._batch(list(ops)), self.client)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await arun(self._batch(list(ops)), self.client)

    def _batch(self, ops: list[Op]) -> Plan[list[Result]]:
        """Reads first, on the store as it was; then the puts, the last one per key."""
        results: list[Result] = []
        puts: dict[Key, PutOp] = {}
        for op in ops:
            result: Result = None
            if isinstance(op, GetOp):
                found = yield from self._items(op.namespace, op.key)
                result = found.get((op.namespace, op.key), (None, None))[1]
            elif isinstance(op, SearchOp):
                result = yield from self._search(op)
            elif isinstance(op, ListNamespacesOp):
                result = yield from self._namespaces(op)
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
            results.append(result)
        for put in puts.values():
            yield from self._put(put)
        return results

    def _entries(self, namespace: Namespace, key: str) -> Plan[list[Entry]]:
        """The live turns of one key, newest first."""
        session = session_id(namespace, key)
        if session is None:
            return []
        agent = agent_id(namespace)
        found = yield from turns(
            self.memory_id,
            agent_id=agent,
            session_id=session,
            keep=lambda e: live(e) and e.agent_id == agent and e.session_id == session,
        )
        return sorted(found, key=_recency, reverse=True)

    def _items(
        self, prefix: Namespace, key: str | None = None
    ) -> Plan[dict[Key, tuple[Entry, Item]]]:
        """The items under ``prefix`` (or of one key), each from its newest turn."""
        if key is not None:
            found = yield from self._entries(prefix, key)
        else:
            narrow = f"{agent_id(prefix)}." if prefix else None
            if narrow is not None and len(narrow.encode()) > MAX_ID_TEXT:
                return {}
            found = yield from turns(self.memory_id, session_contains=narrow)
        newest = {(e.agent_id, e.session_id): e for e in sorted(found, key=_recency)}
        items: dict[Key, tuple[Entry, Item]] = {}
        for entry in newest.values():
            item = item_of(entry)
            if item is not None and item.namespace[: len(prefix)] == prefix:
                items[(item.namespace, item.key)] = (entry, item)
        return items

    def _search(self, op: SearchOp) -> Plan[list[SearchItem]]:
        found = yield from self._items(op.namespace_prefix)
        kept = [(e, i) for e, i in found.values() if matches(i.value, op.filter)]
        kept.sort(key=lambda pair: _recency(pair[0]), reverse=True)
        scores: dict[int, float] = {}
        query = op.query
        if query and kept:
            spaces = {i.namespace for _, i in kept}
            agent = agent_id(next(iter(spaces))) if len(spaces) == 1 else None
            hits = yield lambda c: c.search(
                query,
                [self.memory_id],
                top_n=MAX_TOP_N,
                similarity_threshold=0.0,
                agent_id=agent,
                types=["raw"],
            )
            scores = {h.entry.message_id: h.score for h in hits}
            kept.sort(key=lambda pair: -scores.get(pair[0].message_id, -1.0))
        page = kept[op.offset : op.offset + op.limit]
        return [_search_item(i, scores.get(e.message_id)) for e, i in page]

    def _namespaces(self, op: ListNamespacesOp) -> Plan[list[tuple[str, ...]]]:
        conditions = op.match_conditions or ()
        prefixes = [literal_prefix(c.path) for c in conditions if c.match_type == "prefix"]
        found = yield from self._items(max(prefixes, key=len, default=()))
        spaces = {
            i.namespace
            for _, i in found.values()
            if all(namespace_matches(c.match_type, c.path, i.namespace) for c in conditions)
        }
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    def _put(self, op: PutOp) -> Plan[None]:
        stale = yield from self._entries(op.namespace, op.key)
        if op.value is not None:
            stale = yield from self._write(op.namespace, op.key, op.value, stale)
        ids = [e.message_id for e in stale]
        yield from remove(self.memory_id, erase=self.erase, message_ids=ids)

    def _write(
        self, namespace: Namespace, key: str, value: Mapping[str, Any], found: list[Entry]
    ) -> Plan[list[Entry]]:
        """Write ``value`` under the key; returns the turns it leaves to remove."""
        session = session_id(namespace, key)
        if session is None:
            raise InvalidInput(
                "key", f"A namespace and key take at most {MAX_ID_TEXT - 1} bytes together."
            )
        text = json.dumps(dict(value), ensure_ascii=False)
        if found and not self.erase:
            newest = found[0].message_id
            yield lambda c: c.correct(self.memory_id, newest, turn_text(text, ""))
            return found[1:]
        created = found[0].valid_at if found else None
        yield lambda c: c.add_turn(
            [self.memory_id],
            user_input=text,
            agent_response="",
            agent_id=agent_id(namespace),
            session_id=session,
            conversation_time=created,
        )
        return found


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
    if parts is None or parts[1] or not namespace or not entry.session_id.startswith(dot):
        return None
    try:
        value = json.loads(parts[0])
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


__all__ = ["RecalleryStore", "agent_id", "item_of", "session_id"]
