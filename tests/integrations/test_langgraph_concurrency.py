"""The LangGraph store under concurrency: a burst of calls made at once is served as one batch
(as LangGraph's ``AsyncBatchedBaseStore`` serves it), and concurrent puts of one key leave one
live turn, the later call's."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
from tests.support.integrations import World

from recallery.integrations.langgraph import RecalleryStore

KEYS = 100


def test_a_burst_of_5000_operations_finishes_in_seconds(world: World) -> None:
    """Before batching, every call was its own chain of requests and a search paged through
    the whole memory: the burst ran for minutes."""
    store = RecalleryStore(world.async_client(), world.notes.id)

    async def burst() -> list[Any]:
        calls = []
        for m in range(10):
            for i in range(KEYS):
                ns = ("test", "burst", str(m % 2))
                calls += [
                    store.aput(ns, f"key{i}", {"n": i, "round": m}),
                    store.aget(ns, f"key{i}"),
                    store.asearch(("test",), filter={"n": i}),
                    store.alist_namespaces(prefix=("test",), max_depth=m + 1),
                    store.aput(ns, f"key{i}", {"n": i, "round": m, "last": True}),
                ]
        return await asyncio.gather(*calls)

    started = time.monotonic()
    results = anyio.run(burst)
    took = time.monotonic() - started
    assert len(results) == 5000
    assert took < 20, f"{took:.1f} s"
    assert results[1] is None and results[3] == []  # reads see the store as it was
    held = world.engine.list_messages(world.alice, world.notes.id, page_size=1)
    assert held.total == 2 * KEYS  # one live turn per key
    after = anyio.run(lambda: store.asearch(("test", "burst", "1"), limit=1000))
    assert sorted(i.value["n"] for i in after) == list(range(KEYS))
    assert {i.value["round"] for i in after} == {9} and all(i.value["last"] for i in after)


def test_concurrent_puts_of_one_key_leave_one_turn_and_the_later_call_wins(
    world: World,
) -> None:
    store = RecalleryStore(world.async_client(), world.notes.id)
    other = RecalleryStore(world.async_client(), world.notes.id)  # a second store, same key
    ns = ("users", "u1")

    async def same_tick() -> None:
        await asyncio.gather(*(store.aput(ns, "home", {"v": n}) for n in range(5)))

    async def separate_batches() -> None:
        async def later(n: int) -> None:
            await asyncio.sleep(0.001 * n)
            await store.aput(ns, "home", {"v": n})

        await asyncio.gather(*(later(n) for n in range(10, 15)))

    async def two_stores() -> None:
        await asyncio.gather(
            *(
                s.aput(ns, "home", {"v": n})
                for n, s in zip(range(20, 30), [store, other] * 5, strict=True)
            )
        )

    anyio.run(same_tick)
    assert [t.content for t in world.turns(world.notes)] == [
        'User Input: {"v": 4}\nAgent Response: '
    ]
    anyio.run(separate_batches)
    (turn,) = world.turns(world.notes)
    assert turn.content == 'User Input: {"v": 14}\nAgent Response: '
    anyio.run(two_stores)
    assert len(world.turns(world.notes)) == 1  # across stores: one live turn, the newest
    item = anyio.run(lambda: other.aget(ns, "home"))
    assert item is not None and item.value["v"] in range(20, 30)
