"""The OpenAI Agents SDK session and tools: the session held to the SDK's own ``SQLiteSession``
side by side, run by the SDK's ``Runner`` on a chat model (the fake OpenAI-compatible server),
and the tools invoked as the SDK invokes them; then the key deciding what exists and what may
change."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, RunConfig, Runner
from agents.memory import Session, SessionSettings, SQLiteSession
from agents.tool_context import ToolContext
from openai import AsyncOpenAI
from tests.support.integrations import DIARY_SECRET, World, make_memory

from recallery import Forbidden, NotFound, SearchRequest
from recallery.integrations.openai_agents import AGENT_ID, RecallerySession, memory_tools
from recallery.testing import FakeLLM, Reply

USER_1 = {"role": "user", "content": "I moved to Berlin last spring.\nIt is lovely."}
REPLY_1 = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Noted: Berlin. ✓", "annotations": []}],
}
CALL = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": "x"}'}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "nothing"}
USER_2 = {"role": "user", "content": "Where do I live?"}
ITEMS: list[Any] = [USER_1, REPLY_1, CALL, OUTPUT, USER_2]

Factory = Callable[..., Session]
KINDS = ["SQLiteSession", "RecallerySession over Client", "RecallerySession over AsyncClient"]


def build(kind: str, world: World, db: Path, session_id: str = "chat-1", **options: Any) -> Session:
    """A session of a kind (the SDK's in one database file, recallery's in Alice's notes)."""
    if kind == "SQLiteSession":
        return SQLiteSession(session_id, db, **options)
    client = world.async_client() if kind.endswith("AsyncClient") else world.client()
    return RecallerySession(session_id, client, world.notes.id, **options)


@pytest.fixture(params=KINDS)
def make(request: pytest.FixtureRequest, world: World, tmp_path: Path) -> Factory:
    db = tmp_path / "sessions.db"
    return lambda *args, **options: build(request.param, world, db, *args, **options)


def run(check: Callable[[], Any]) -> None:
    anyio.run(check)


def test_items_come_back_in_order_and_the_latest_by_limit(make: Factory) -> None:
    session = make()
    limited = make(session_settings=SessionSettings(limit=3))

    async def check() -> None:
        assert await session.get_items() == []
        await session.add_items(ITEMS[:2])
        await session.add_items(ITEMS[2:])
        assert await session.get_items() == ITEMS
        assert await session.get_items(limit=2) == ITEMS[-2:]
        assert await session.get_items(limit=0) == []
        assert await limited.get_items() == ITEMS[-3:]
        assert await limited.get_items(limit=1) == ITEMS[-1:]

    run(check)


def test_settings_given_as_a_dict_are_checked_and_coerced(make: Factory) -> None:
    """As the SDK's own sessions do: ``Runner`` reads ``session_settings.limit``."""
    assert make().session_settings == SessionSettings()
    limited = make(session_settings={"limit": 2})
    assert limited.session_settings == SessionSettings(limit=2)
    with pytest.raises(TypeError, match="limitt"):
        make(session_settings={"limitt": 2})

    async def check() -> None:
        await limited.add_items(ITEMS)
        assert await limited.get_items() == ITEMS[-2:]
        merged = limited.session_settings.resolve(SessionSettings(limit=4))  # as Runner does
        assert merged.limit == 4

    run(check)


def test_pop_item_removes_the_newest(make: Factory) -> None:
    session = make()

    async def check() -> None:
        assert await session.pop_item() is None
        await session.add_items(ITEMS[:3])
        assert await session.pop_item() == CALL
        assert await session.get_items() == ITEMS[:2]
        assert await session.pop_item() == REPLY_1
        assert await session.pop_item() == USER_1
        assert await session.pop_item() is None

    run(check)


def test_sessions_are_apart_and_clearing_one_leaves_the_other(make: Factory) -> None:
    one, ten = make("chat-1"), make("chat-10")

    async def check() -> None:
        await one.add_items(ITEMS[:2])
        await ten.add_items(ITEMS[2:])
        assert await one.get_items() == ITEMS[:2]
        assert await ten.get_items() == ITEMS[2:]
        await one.clear_session()
        assert await one.get_items() == []
        assert await ten.get_items() == ITEMS[2:]

    run(check)


def test_items_that_cannot_be_stored_leave_nothing_and_the_session_usable(make: Factory) -> None:
    """As the SDK's SQLite sessions roll a failed ``add_items`` back: an item that is not JSON
    fails the call before anything of it is written."""
    session = make()

    async def check() -> None:
        with pytest.raises(TypeError):
            await session.add_items([USER_1, {"role": "user", "content": object()}, USER_2])
        assert await session.get_items() == []
        await session.add_items([USER_2])
        assert await session.get_items() == [USER_2]

    run(check)


def test_a_closed_session_refuses_every_call_and_keeps_its_items(make: Factory) -> None:
    """As the SDK's SQLite sessions: closing twice is harmless, any call after it raises (an
    empty ``add_items`` too), closing before use is terminal, and a new session reads on."""
    session, unused = make(), make("chat-2")
    closed = f"{type(session).__name__} is closed"

    async def check() -> None:
        await session.add_items(ITEMS[:2])
        for s in (session, session, unused):
            s.close()  # type: ignore[attr-defined]  # beside the Session protocol
        calls = [session.get_items, session.pop_item, session.clear_session, unused.get_items]
        for call in calls:
            with pytest.raises(RuntimeError, match=closed):
                await call()
        for items in (ITEMS[2:], []):
            with pytest.raises(RuntimeError, match=closed):
                await session.add_items(items)
        assert await make().get_items() == ITEMS[:2]

    run(check)


@pytest.mark.parametrize("kind", KINDS[1:])
def test_items_of_one_instant_keep_the_order_they_were_added(world: World, kind: str) -> None:
    """The upstream same-timestamp tests set SQLite's ``created_at`` by hand; here the clock
    is frozen, so every turn has one valid time and only the order of adding tells them
    apart (the Messages list breaks ties by id)."""
    session = build(kind, world, Path())

    async def check() -> None:
        await session.add_items([USER_1])
        await session.add_items([REPLY_1, CALL])
        assert await session.get_items() == [USER_1, REPLY_1, CALL]
        assert await session.get_items(limit=2) == [REPLY_1, CALL]
        assert await session.pop_item() == CALL
        assert await session.get_items() == [USER_1, REPLY_1]

    run(check)
    assert len({t.valid_at for t in world.turns(world.notes)}) == 1


@pytest.mark.parametrize("erase", [True, False], ids=["erase", "forget"])
@pytest.mark.parametrize("kind", KINDS[1:])
def test_concurrent_pop_item_returns_each_row_once(world: World, kind: str, erase: bool) -> None:
    """As the SDK's test of that name: pops at once (each its own session and client) return
    every item once, none twice and none lost: the erase or forget that removes a turn is the
    pop's claim, and a pop that finds its turn taken moves on to the next newest."""
    items: list[Any] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"item {i} 条目 {i}"}
        for i in range(6)
    ]
    sessions = [build(kind, world, Path(), erase=erase) for _ in items]

    async def check() -> None:
        await sessions[0].add_items(items)
        popped = await asyncio.gather(*(s.pop_item() for s in sessions))
        assert sorted(p["content"] for p in popped) == sorted(i["content"] for i in items)
        assert await sessions[0].get_items() == []
        assert await sessions[0].pop_item() is None

    run(check)
    left = world.turns(world.notes)  # forgotten turns stay listed to their owner
    assert [t.forget_at is not None for t in left] == ([] if erase else [True] * len(items))


def test_turns_of_the_session_that_hold_no_item_are_passed_over(world: World) -> None:
    """The upstream corrupt-row tests write bad JSON into SQLite's table; here a turn of the
    session written by other means holds no item: a limit counts items, and pop takes the
    newest item (or None) and leaves that turn alone."""
    session, broken = (RecallerySession(s, world.client(), world.notes.id) for s in "ab")
    run(lambda: session.add_items(ITEMS[:3]))
    for s in "ab":
        world.engine.add_turn(world.alice, [world.notes.id], user_input="not valid json {{{",
                              agent_response="", agent_id=AGENT_ID, session_id=s)  # fmt: skip

    async def check() -> None:
        assert await session.get_items(limit=2) == ITEMS[1:3]
        assert await session.pop_item() == CALL
        assert await session.get_items() == ITEMS[:2]
        assert await broken.pop_item() is None
        assert await broken.get_items() == []

    run(check)
    assert [t.content for t in world.turns(world.notes)][:2] == [
        "User Input: not valid json {{{\nAgent Response: "
    ] * 2


# --- what only recallery has ------------------------------------------------------------


def test_items_are_turns_of_the_memory(world: World) -> None:
    session = RecallerySession("chat-1", world.client(), world.notes.id, user_id="u-42")
    run(lambda: session.add_items(ITEMS[:2]))
    reply, user = world.turns(world.notes)
    assert user.content == f"User Input: {json.dumps(USER_1, ensure_ascii=False)}\nAgent Response: "
    assert (
        reply.content == f"User Input: \nAgent Response: {json.dumps(REPLY_1, ensure_ascii=False)}"
    )
    assert {(t.session_id, t.agent_id, t.user_id) for t in (user, reply)} == {
        ("chat-1", "openai-agents", "u-42")
    }
    run(session.clear_session)
    assert world.turns(world.notes) == []


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def test_the_runner_keeps_the_conversation_in_recallery(world: World, llm: FakeLLM) -> None:
    llm.push(Reply.text("Noted, you live in Berlin."), Reply.text("You live in Berlin."))
    model = OpenAIChatCompletionsModel("fake-model", AsyncOpenAI(base_url=llm.url, api_key="k"))
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    session = RecallerySession("chat-7", world.async_client(), world.notes.id)
    config = RunConfig(tracing_disabled=True)

    async def check() -> None:
        first = await Runner.run(agent, "I moved to Berlin.", session=session, run_config=config)
        assert first.final_output == "Noted, you live in Berlin."
        second = await Runner.run(agent, "Where do I live?", session=session, run_config=config)
        assert second.final_output == "You live in Berlin."

    run(check)
    sent = [m["content"] for m in llm.chat_requests()[1]["messages"]]
    assert "I moved to Berlin." in sent and "Noted, you live in Berlin." in str(sent)
    assert [t.session_id for t in world.turns(world.notes)] == ["chat-7"] * 4


async def invoke(tool: FunctionTool, **arguments: Any) -> str:
    text = json.dumps(arguments)
    context = ToolContext(None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=text)
    return str(await tool.on_invoke_tool(context, text))


def test_the_tools_recall_and_remember(world: World) -> None:
    facts = make_memory(world.engine, world.alice, "facts", ["raw", "semantic"])
    world.engine.add_turn(world.alice, [facts.id], user_input="I drink green tea.",
                          agent_response="Noted.", user_id="u-42")  # fmt: skip
    world.engine.add_turn(world.alice, [facts.id], user_input="I drink black coffee.",
                          agent_response="Noted.", user_id="u-7")  # fmt: skip
    recall, remember = memory_tools(world.async_client(), facts.id, user_id="u-42")
    assert (recall.name, remember.name) == ("recall_memory", "remember")

    async def check() -> None:
        block = await invoke(recall, query="what does the user drink? tea coffee")
        assert "green tea" in block and "coffee" not in block
        kept = await invoke(remember, fact="The user lives in Berlin.")
        assert kept.startswith("Kept as entry") and "(add)" in kept
        assert "nothing" in await invoke(recall, query="zebra xylophone")

    run(check)
    request = SearchRequest("Berlin", (facts.id,), similarity_threshold=0.1)
    hits = [h.entry for h in world.engine.search(world.alice, request)]
    assert [(e.content, e.origin.value, e.user_id) for e in hits] == [
        ("The user lives in Berlin.", "manual", "u-42")
    ]


def test_a_key_scoped_to_one_memory_gets_nothing_of_another(world: World) -> None:
    scoped = world.async_client(world.key(scope=[world.notes.id]))
    before = world.contents(world.diary)

    async def check() -> None:
        for memory in (world.diary, world.bobs):
            session = RecallerySession("chat-1", scoped, memory.id)
            for attempt in (session.get_items, session.pop_item, session.clear_session):
                with pytest.raises(NotFound):
                    await attempt()
            with pytest.raises(NotFound):
                await session.add_items([USER_1])
            recall, remember = memory_tools(scoped, memory.id)
            answer = await invoke(recall, query="door code 4711 Berlin locker")
            assert answer == "Memory holds nothing about that."  # a search drops what it cannot see
            assert "not found" in await invoke(remember, fact="The door code is 0000.")
        own, _ = memory_tools(scoped, world.notes.id)
        assert "4711" not in await invoke(own, query="Berlin diary door code 4711")

    run(check)
    assert world.contents(world.diary) == before and DIARY_SECRET in before[0][1]


def test_a_read_only_key_reads_but_cannot_write(world: World) -> None:
    run(lambda: RecallerySession("chat-1", world.client(), world.notes.id).add_items([USER_1]))
    before = world.contents(world.notes)
    reader = world.async_client(world.key(capabilities=["read"]))
    session = RecallerySession("chat-1", reader, world.notes.id)
    recall, remember = memory_tools(reader, world.notes.id)

    async def check() -> None:
        assert await session.get_items() == [USER_1]
        with pytest.raises(Forbidden, match="'write'"):
            await session.add_items([USER_2])
        for attempt in (session.pop_item, session.clear_session):
            with pytest.raises(Forbidden, match="'manage'"):
                await attempt()
        assert "Berlin" in await invoke(recall, query="Berlin")
        assert "lacks the 'write' capability" in await invoke(remember, fact="A new fact.")

    run(check)
    assert world.contents(world.notes) == before
