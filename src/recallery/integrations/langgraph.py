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
  refused with the new value in place.) Concurrent puts of one key leave one live turn: each
  put removes the key's turns older than its own, so the last written stays; calls made
  through one store and one event loop are written in the order they were made.
- ``search`` without a query lists the items under the namespace prefix that pass the filter,
  most recently updated first. With a query it ranks them by recallery's hybrid search
  (keywords and vectors) over the prefix's only namespace, or over the memory when the prefix
  holds several; it scores the best 100 of them and lists the rest after, unscored (as
  LangGraph's stores list items without a vector). Filters: equality, nested values (also
  named with dots: ``{"user.access-level": ...}``) and ``$eq``, ``$ne``, ``$gt``, ``$gte``,
  ``$lt``, ``$lte``.
- ``list_namespaces`` takes prefix and suffix conditions with ``*``, ``max_depth``, ``limit``
  and ``offset``.
- ``put(..., index=False)`` keeps the value on the turn's agent side: listed and read as any
  item, never scored by a query (recallery still holds its text in the memory's indexes).
  A list of fields indexes the whole value; TTLs are not supported.
- The async methods made in one tick of an event loop run as one batch, as LangGraph's
  ``AsyncBatchedBaseStore`` runs them: the batch's reads come from one listing of the
  namespaces it touches, its distinct queries and its writes go out together (at most
  :data:`~recallery.integrations.base.FAN_OUT` requests at once).

A turn that is disabled, forgotten or rejected by a person is not an item, nor one whose text
no longer holds a JSON object; a memory used as a store is best kept for the store (a raw-only
memory: nothing is extracted). The memory's budget applies: its forgetting policy may evict
items. ``batch`` needs a :class:`recallery.Client`; ``abatch`` takes either client.
"""

from __future__ import annotations

from recallery.extras import require

require("langgraph", "httpx", extra="langgraph", what="recallery.integrations.langgraph")

import json  # noqa: E402
from collections.abc import Iterable, Mapping, Sequence  # noqa: E402
from typing import Any  # noqa: E402

from langgraph.store.base import (  # noqa: E402
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
)

from recallery.errors import Conflict, InvalidInput, NotFound  # noqa: E402
from recallery.integrations.base import (  # noqa: E402
    AnyClient,
    Plan,
    Step,
    arun,
    live,
    remove,
    run,
    together,
    turn_text,
    turns,
)
from recallery.integrations.batching import TickBatcher  # noqa: E402
from recallery.integrations.langgraph_items import (  # noqa: E402
    Held,
    Key,
    Scores,
    agent_id,
    by_key,
    common,
    found_by,
    item_of,
    key_of,
    namespaces_of,
    newest_item,
    reach,
    search_of,
    session_id,
)
from recallery.models import Entry  # noqa: E402
from recallery.validation import MAX_ID_TEXT, MAX_TOP_N  # noqa: E402


class RecalleryStore(BaseStore):
    """LangGraph's store over one memory, through the SDK (see the module's documentation)."""

    def __init__(self, client: AnyClient, memory_id: str, *, erase: bool = True) -> None:
        self.client = client
        self.memory_id = memory_id
        self.erase = erase
        self._batcher: TickBatcher[Op, Result] = TickBatcher(self._abatch)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return run(self._batch(_checked(ops)), self.client)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The operations, joined with the others made in this tick of the loop."""
        return await self._batcher.submit(_checked(ops))

    async def _abatch(self, ops: list[Op]) -> list[Result]:
        return await arun(self._batch(ops), self.client)

    def _batch(self, ops: list[Op]) -> Plan[list[Result]]:
        """Reads first, on the store as it was, from one listing; then the puts, the last one
        per key."""
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
        held = yield from self._held(ops)
        searches = [op for op in ops if isinstance(op, SearchOp)]
        scores = yield from self._scores(searches, held)
        results: list[Result] = []
        puts: dict[Key, PutOp] = {}
        for op in ops:
            result: Result = None
            if isinstance(op, GetOp):
                result = newest_item(held, op.namespace, op.key)
            elif isinstance(op, SearchOp):
                result = search_of(op, held, scores)
            elif isinstance(op, ListNamespacesOp):
                result = namespaces_of(op, held)
            elif isinstance(op, PutOp):
                puts[key_of(op.namespace, op.key)] = op
            results.append(result)
        yield from self._put(puts, held)
        return results

    def _held(self, ops: Sequence[Op]) -> Plan[Held]:
        """The live turns of every key under the namespaces ``ops`` reach: of one key by its
        ids, else of their common prefix in one listing."""
        keys = {key_of(op.namespace, op.key) for op in ops if isinstance(op, (GetOp, PutOp))}
        if keys and all(isinstance(op, (GetOp, PutOp)) for op in ops) and len(keys) == 1:
            ((agent, session),) = keys
            if not session:
                return {}
            found = yield from turns(
                self.memory_id,
                agent_id=agent,
                session_id=session,
                keep=lambda e: live(e) and (e.agent_id, e.session_id) == (agent, session),
            )
            return by_key(found)
        spaces = [reach(op) for op in ops]
        if not spaces:
            return {}
        prefix = common(spaces)
        narrow = f"{agent_id(prefix)}." if prefix else None
        if narrow is not None and len(narrow.encode()) > MAX_ID_TEXT:
            return {}
        found = yield from turns(self.memory_id, session_contains=narrow)
        return by_key(found)

    def _scores(self, searches: list[SearchOp], held: Held) -> Plan[dict[tuple[str, str], Scores]]:
        """The ranking of each distinct query (over one namespace when its prefix holds only
        one, else over the memory), searched together."""
        asked: dict[tuple[str, str], None] = {}
        for op in searches:
            found = found_by(op, held)
            if op.query and found:
                spaces = {i.namespace for _, i in found}
                agent = agent_id(next(iter(spaces))) if len(spaces) == 1 else ""
                asked[(op.query, agent)] = None
        hits = yield from together([self._ranking(q, a) for q, a in asked])
        return {
            k: {h.entry.message_id: h.score for h in found}
            for k, found in zip(asked, hits, strict=True)
        }

    def _ranking(self, query: str, agent: str) -> Step:
        return lambda c: c.search(
            query,
            [self.memory_id],
            top_n=MAX_TOP_N,
            similarity_threshold=0.0,
            agent_id=agent or None,
            types=["raw"],
        )

    def _put(self, puts: Mapping[Key, PutOp], held: Held) -> Plan[None]:
        """Write each put's value together, then remove what each key held before: the turns
        older than the one written (a later writer's stays, and removes this one), or for a
        delete, what the listing found."""
        writes = {k: op for k, op in puts.items() if op.value is not None}
        steps = [self._write(op, held.get(k, [])) for k, op in writes.items()]
        written = yield from together(steps)
        mine = {k: e.message_id for k, e in zip(writes, written, strict=True)}
        gone = {e.message_id for k in puts.keys() - writes.keys() for e in held.get(k, [])}
        now = held
        for _ in range(3):
            if mine:
                now = yield from self._held(list(puts.values()))
            stale = [
                e.message_id
                for k in puts
                for e in now.get(k, [])
                if e.message_id < mine.get(k, 0) or e.message_id in gone
            ]
            try:
                yield from remove(self.memory_id, erase=self.erase, message_ids=sorted(stale))
                return
            except NotFound:  # another writer removed some of them first: list again
                if not mine:
                    now = yield from self._held(list(puts.values()))
        raise Conflict("The store's keys kept changing under concurrent writers; try again.")

    def _write(self, op: PutOp, found: list[Entry]) -> Step:
        """Write the put's value under its key: the step answers the entry that holds it."""
        agent, session = key_of(op.namespace, op.key)
        if not session:
            raise InvalidInput(
                "key", f"A namespace and key take at most {MAX_ID_TEXT - 1} bytes together."
            )
        text = json.dumps(dict(op.value or {}), ensure_ascii=False)
        said = (text, "") if op.index is not False else ("", text)  # unindexed: never scored
        if found and not self.erase:
            newest = found[0].message_id
            return lambda c: c.correct(self.memory_id, newest, turn_text(*said))
        created = found[0].valid_at if found else None
        return lambda c: _first(
            c.add_turn(
                [self.memory_id],
                user_input=said[0],
                agent_response=said[1],
                agent_id=agent,
                session_id=session,
                conversation_time=created,
            )
        )


def _first(answer: Any) -> Any:
    """The first entry of an ``add_turn`` answer, awaited or not."""
    if isinstance(answer, list):
        return answer[0]

    async def first() -> Entry:
        entries: list[Entry] = await answer
        return entries[0]

    return first()


def _checked(ops: Iterable[Op]) -> list[Op]:
    """``ops``, once every namespace label they carry is one LangGraph accepts (a string,
    not empty, without ``.`` or NUL): a label ``"a.b"`` must never address ``("a", "b")``,
    whichever method or ``batch`` call brought it."""
    listed = list(ops)
    for op in listed:
        if isinstance(op, (GetOp, PutOp)):
            _labels(op.namespace)
        elif isinstance(op, SearchOp):
            _labels(op.namespace_prefix)
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                _labels(condition.path)
    return listed


def _labels(namespace: tuple[str, ...]) -> None:
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {namespace}: labels are non-empty "
                "strings without '.' or NUL."
            )


__all__ = ["RecalleryStore", "agent_id", "item_of", "session_id"]
