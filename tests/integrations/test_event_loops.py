"""An adapter given an :class:`~recallery.AsyncClient` keeps working when the framework moves
to another event loop: ``asyncio.run`` per turn, ``Runner.run_sync`` from worker threads. The
server listens on a real socket, where a pooled connection belongs to the loop that opened it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from google.adk.events import Event
from google.genai import types
from tests.support.integrations import World

from recallery import AsyncClient
from recallery.integrations.adk import RecalleryMemoryService
from recallery.integrations.langgraph import RecalleryStore
from recallery.integrations.openai_agents import RecallerySession

T = TypeVar("T")
NS = ("memories", "u-42")


def each_in_its_loop(*steps: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run each step in a fresh event loop, closed after it, as ``asyncio.run`` per turn does."""
    return [asyncio.run(_call(step)) for step in steps]


async def _call(step: Callable[[], Awaitable[T]]) -> T:
    return await step()


def in_threads(step: Callable[[], Awaitable[T]], times: int) -> list[T]:
    """``step`` from worker threads, each with its own loop (``Runner.run_sync`` in threads)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda _: asyncio.run(_call(step)), range(times)))


def test_the_client_itself_across_loops(world: World, url: str) -> None:
    client = AsyncClient(url, world.key())
    found = each_in_its_loop(*[lambda: client.get_memory(world.notes.id)] * 3)
    assert [m.id for m in found] == [world.notes.id] * 3
    assert [m.id for m in in_threads(lambda: client.get_memory(world.notes.id), 4)] == [
        world.notes.id
    ] * 4


def test_the_langgraph_store_across_loops(world: World, url: str) -> None:
    store = RecalleryStore(AsyncClient(url, world.key()), world.notes.id)
    each_in_its_loop(
        lambda: store.aput(NS, "home", {"text": "Berlin"}),
        lambda: store.aput(NS, "tea", {"text": "green"}),
    )
    items = in_threads(lambda: store.aget(NS, "home"), 3)
    assert [i.value for i in items if i is not None] == [{"text": "Berlin"}] * 3


def test_the_openai_agents_session_across_loops(world: World, url: str) -> None:
    session = RecallerySession("chat-1", AsyncClient(url, world.key()), world.notes.id)
    user = {"role": "user", "content": "I live in Berlin."}
    each_in_its_loop(lambda: session.add_items([user]), lambda: session.add_items([user]))
    assert in_threads(session.get_items, 2) == [[user, user]] * 2


def test_the_adk_memory_service_across_loops(world: World, url: str) -> None:
    service = RecalleryMemoryService(AsyncClient(url, world.key()), world.notes.id)
    said = types.Content(role="user", parts=[types.Part(text="I live in Berlin.")])
    event = Event(id="e1", invocation_id="i1", author="user", timestamp=1000.0, content=said)
    each_in_its_loop(
        lambda: service.add_events_to_memory(app_name="app", user_id="u", events=[event]),
        lambda: service.search_memory(app_name="app", user_id="u", query="Berlin"),
    )
    found = in_threads(
        lambda: service.search_memory(app_name="app", user_id="u", query="Berlin"), 2
    )
    assert [[m.content.parts[0].text for m in r.memories] for r in found] == [  # type: ignore[index]
        ["I live in Berlin."]
    ] * 2
