"""The LlamaIndex memory block inside LlamaIndex's own ``Memory``: what leaves the short-term
queue is kept in recallery as turns, and recallery's context block comes back into the prompt;
then how messages make turns, and the key deciding what exists and what may change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from tests.support.integrations import World

from recallery import Forbidden, NotFound
from recallery.integrations.llamaindex import RecalleryMemoryBlock, turns_of

CLIENTS = ["Client", "AsyncClient"]


def run(check: Callable[[], Any]) -> None:
    anyio.run(check)


def says(role: str, text: str, **extra: Any) -> ChatMessage:
    return ChatMessage(role=role, content=text, additional_kwargs=extra)


def block_for(world: World, which: str = "AsyncClient", **options: Any) -> RecalleryMemoryBlock:
    client = world.async_client() if which == "AsyncClient" else world.client()
    return RecalleryMemoryBlock(client=client, memory_id=world.notes.id, **options)


@pytest.mark.parametrize("which", CLIENTS)
def test_the_block_in_llamaindex_memory(world: World, which: str) -> None:
    block = block_for(world, which, user_id="u-42")
    memory = Memory.from_defaults(
        session_id="chat-1",
        memory_blocks=[block],
        token_limit=40,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
        tokenizer_fn=str.split,
    )
    conversation = [
        says("user", "I moved to Berlin last spring and I love the lakes there."),
        says("assistant", "Noted: you live in Berlin now, near the lakes."),
        says("user", "I also drink green tea every single morning before work."),
        says("assistant", "Green tea every morning, noted."),
        says("user", "Where do I live?"),
    ]

    async def check() -> None:
        for message in conversation:
            await memory.aput(message)
        prompt = await memory.aget()
        system = prompt[0]
        assert system.role is MessageRole.SYSTEM and "<recallery>" in (system.content or "")
        assert "I moved to Berlin last spring" in (system.content or "")
        assert prompt[-1].content == "Where do I live?"

    run(check)
    kept = world.turns(world.notes)[::-1]
    assert kept and kept[0].content == (
        "User Input: I moved to Berlin last spring and I love the lakes there.\n"
        "Agent Response: Noted: you live in Berlin now, near the lakes."
    )
    assert {(t.session_id, t.agent_id, t.user_id) for t in kept} == {
        ("chat-1", "llamaindex", "u-42")
    }


def test_messages_make_turns() -> None:
    messages = [
        says("system", "You are helpful."),
        says("user", "Hello."),
        says("user", "I am Ada."),
        says("assistant", "Hi Ada."),
        says("tool", "lookup: nothing"),
        says("assistant", "How can I help?"),
        says("user", "Bye.", session_id="s-2"),
        says("assistant", ""),
        says("assistant", "Bye!", session_id="s-2"),
        says("assistant", "A word in another session.", session_id="s-3"),
    ]
    assert turns_of(messages) == [
        ("", "Hello.\nI am Ada.", "Hi Ada.\nHow can I help?"),
        ("s-2", "Bye.", "Bye!"),
        ("s-3", "", "A word in another session."),
    ]


def test_recall_searches_with_the_latest_messages(world: World) -> None:
    mine, theirs = block_for(world, user_id="u-42"), block_for(world, user_id="u-7")

    async def check() -> None:
        await mine.aput([says("user", "I drink green tea."), says("assistant", "Tea, noted.")])
        await theirs.aput([says("user", "I drink black coffee."), says("assistant", "Noted.")])
        latest = [says("user", "zebra"), says("user", "what do I drink? tea or coffee")]
        found = await mine.aget(latest)
        assert "green tea" in found and "coffee" not in found
        assert await block_for(world, retrieval_context_window=1).aget(latest[:1]) == ""
        assert await mine.aget([]) == "" and await mine.aget([says("user", "   ")]) == ""

    run(check)


def test_a_key_scoped_to_one_memory_gets_nothing_of_another(world: World) -> None:
    scoped = world.async_client(world.key(scope=[world.notes.id]))
    before = world.contents(world.diary)

    async def check() -> None:
        for memory in (world.diary, world.bobs):
            block = RecalleryMemoryBlock(client=scoped, memory_id=memory.id)
            assert await block.aget([says("user", "door code 4711 Berlin locker 8080")]) == ""
            with pytest.raises(NotFound):
                await block.aput([says("user", "Overwrite the code."), says("assistant", "ok")])

    run(check)
    assert world.contents(world.diary) == before


def test_a_read_only_key_reads_but_cannot_write(world: World) -> None:
    run(lambda: block_for(world).aput([says("user", "I moved to Berlin.")]))
    before = world.contents(world.notes)
    reader = RecalleryMemoryBlock(
        client=world.async_client(world.key(capabilities=["read"])), memory_id=world.notes.id
    )

    async def check() -> None:
        assert "I moved to Berlin." in await reader.aget([says("user", "Berlin")])
        with pytest.raises(Forbidden, match="'write'"):
            await reader.aput([says("user", "Now Lyon.")])

    run(check)
    assert world.contents(world.notes) == before
