"""The Google ADK memory service, held to ADK's own ``InMemoryMemoryService`` side by side
(sessions added again and again, deltas, deletion that stays deleted, app and user scope),
then what only recallery has and the key deciding what exists and what may change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from google.adk.events import Event
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import Session
from google.genai import types
from tests.support.integrations import World, make_memory

from recallery import Forbidden, NotFound
from recallery.integrations.adk import RecalleryMemoryService, one_word, says

APP, USER = "helper", "u-42"
KINDS = ["InMemoryMemoryService", "Recallery over Client", "Recallery over AsyncClient"]


def build(kind: str, world: World, memory_id: str | None = None) -> BaseMemoryService:
    if kind == "InMemoryMemoryService":
        return InMemoryMemoryService()
    client = world.async_client() if kind.endswith("AsyncClient") else world.client()
    return RecalleryMemoryService(client, memory_id or world.notes.id)


@pytest.fixture(params=KINDS)
def service(request: pytest.FixtureRequest, world: World) -> BaseMemoryService:
    return build(request.param, world)


class Said:
    """Events at increasing times, an hour before the frozen clock's now."""

    def __init__(self, world: World) -> None:
        self.at = world.engine.clock.now().timestamp() - 3600

    def __call__(self, author: str, text: str) -> Event:
        self.at += 1.25
        role = "user" if author == "user" else "model"
        content = types.Content(role=role, parts=[types.Part(text=text)])
        return Event(author=author, content=content, timestamp=self.at, invocation_id="i-1")


@pytest.fixture
def said(world: World) -> Said:
    return Said(world)


def session(events: list[Event], sid: str = "s-1", app: str = APP, user: str = USER) -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=events)


def run(check: Callable[[], Any]) -> None:
    anyio.run(check)


async def texts(service: BaseMemoryService, query: str, user: str = USER) -> list[str]:
    found = await service.search_memory(app_name=APP, user_id=user, query=query)
    return [_text(m) for m in found.memories]


def _text(m: MemoryEntry) -> str:
    return " ".join(p.text or "" for p in (m.content.parts or []))


def test_search_finds_what_the_user_and_agent_said_in_their_scope(
    service: BaseMemoryService, said: Said
) -> None:
    mine = session([said("user", "I moved to Berlin last spring."),
                    said("helper_agent", "Noted, Berlin it is."),
                    said("helper_agent", "")])  # fmt: skip
    theirs = session([said("user", "I live in Berlin-Paris, in Paris.")], "s-2", user="u-7")
    other_app = session([said("user", "Berlin or Rome? Rome.")], "s-3", app="other-app")

    async def check() -> None:
        for s in (mine, theirs, other_app):
            await service.add_session_to_memory(s)
        found = await texts(service, "Berlin")
        assert sorted(found) == ["I moved to Berlin last spring.", "Noted, Berlin it is."]
        assert await texts(service, "Berlin", user="u-7") == ["I live in Berlin-Paris, in Paris."]
        assert await texts(service, "Berlin", user="nobody") == []

    run(check)


def test_a_one_word_query_finds_only_what_says_the_word(
    service: BaseMemoryService, said: Said
) -> None:
    """ADK's ``simple_match``: a lone word is a lookup, not a topic (unrelated text, and any
    Japanese text, must not come back for it)."""
    events = [said("user", "I like to code in Python."),
              said("user", "The ADK is a great toolkit."),
              said("user", "私の名前は太郎です")]  # fmt: skip

    async def check() -> None:
        await service.add_session_to_memory(session(events))
        assert await texts(service, "Python") == ["I like to code in Python."]
        assert await texts(service, "天気") == []
        assert await texts(service, "nonexistent") == []

    run(check)


@pytest.mark.parametrize(
    ("text", "query", "found"),
    [
        ("I like to code in Python.", "python", True),
        ("I like to code in Python.", "thon", False),  # a whole word, not a part
        ("私はPythonでADKを使っています", "Python", True),  # a Latin word between kana
        ("私はPythonでADKを使っています", "使って", True),  # inside an unspaced run
        ("私の名前は太郎です", "天気", False),
        ("제 이름은 민수입니다", "민수입니다", True),  # Hangul is spaced: a whole word
        ("Meet at the Cafe\u0301", "Café", True),  # decomposed text, composed query
        ("我喜欢机器学习", "机器学习", True),  # a Chinese word inside a sentence
        ("我喜欢机器学习", "深度学习", False),
        ("Я живу в Москве", "москве", True),  # Cyrillic, case-folded
        ("Я живу в Москве", "Москва", False),  # another form is another word here
        ("Ёлка стоит в углу", "ёлка", True),
    ],
)
def test_a_word_is_said_whole_or_inside_an_unspaced_script(
    text: str, query: str, found: bool
) -> None:
    word = one_word(query)
    assert word is not None and says(text, word) is found


def test_non_latin_sessions_of_several_users_answer_as_adk_does(
    service: BaseMemoryService, said: Said
) -> None:
    """ADK's own non-Latin cases side by side with ``InMemoryMemoryService``: Japanese,
    Chinese, Korean, Cyrillic and decomposed (NFD) text, three users, each finding only
    their own words."""
    taro = session([said("user", "私はPythonでADKを使っています"),
                    said("helper_agent", "東京の天気は晴れです")])  # fmt: skip
    li = session(
        [said("user", "我喜欢机器学习"), said("user", "Я живу в Москве")], "s-2", user="李华"
    )
    cafe = said("user", "Meet at the Cafe\u0301 near Gangnam")
    minsu = session([said("user", "제 이름은 민수입니다"), cafe], "s-3", user="민수")

    async def check() -> None:
        for s in (taro, li, minsu):
            await service.add_session_to_memory(s)
        assert await texts(service, "使って") == ["私はPythonでADKを使っています"]
        assert await texts(service, "天気") == ["東京の天気は晴れです"]
        assert await texts(service, "机器学习") == []  # 李华's words, not this user's
        assert await texts(service, "机器学习", user="李华") == ["我喜欢机器学习"]
        assert await texts(service, "МОСКВЕ", user="李华") == ["Я живу в Москве"]
        assert await texts(service, "민수입니다", user="민수") == ["제 이름은 민수입니다"]
        assert await texts(service, "Café", user="민수") == ["Meet at the Cafe\u0301 near Gangnam"]
        assert await texts(service, "Café") == []

    run(check)


def test_a_query_of_several_words_is_no_lookup() -> None:
    assert one_word("How about ADK?") is None and one_word("  ") is None


def test_a_session_added_again_stores_only_what_is_new(
    service: BaseMemoryService, said: Said
) -> None:
    events = [said("user", "I moved to Berlin."), said("helper_agent", "Berlin, noted.")]

    async def check() -> None:
        await service.add_session_to_memory(session(events))
        await service.add_session_to_memory(session(events))
        events.append(said("user", "I also like Berlin in May."))
        await service.add_session_to_memory(session(events))
        found = await texts(service, "Berlin")
        assert sorted(found) == ["Berlin, noted.", "I also like Berlin in May.",
                                 "I moved to Berlin."]  # fmt: skip

    run(check)


def test_a_deleted_memory_stays_deleted_when_the_session_comes_again(
    service: BaseMemoryService, said: Said
) -> None:
    events = [said("user", "My door code is 4711."), said("helper_agent", "Stored the code.")]

    async def check() -> None:
        await service.add_session_to_memory(session(events))
        found = await service.search_memory(app_name=APP, user_id=USER, query="door code 4711")
        (target,) = [m for m in found.memories if "4711" in _text(m)]
        await service.delete_memory(app_name=APP, user_id="u-7", memory_id=target.id)
        await service.delete_memory(app_name="other-app", user_id=USER, memory_id=target.id)
        assert "My door code is 4711." in await texts(service, "door code 4711")
        await service.delete_memory(app_name=APP, user_id=USER, memory_id=target.id)
        await service.delete_memory(app_name=APP, user_id=USER, memory_id=target.id)
        events.append(said("user", "What is my door code?"))
        await service.add_session_to_memory(session(events))
        assert "My door code is 4711." not in await texts(service, "door code 4711")

    run(check)


def test_events_added_as_deltas_are_stored_once(service: BaseMemoryService, said: Said) -> None:
    first, second = said("user", "Tea in Berlin."), said("helper_agent", "Berlin tea, noted.")

    async def check() -> None:
        add = service.add_events_to_memory
        await add(app_name=APP, user_id=USER, session_id="s-1", events=[first])
        await add(app_name=APP, user_id=USER, session_id="s-1", events=[first, second])
        assert sorted(await texts(service, "Berlin tea")) == ["Berlin tea, noted.",
                                                              "Tea in Berlin."]  # fmt: skip

    run(check)


def test_an_event_given_again_with_new_text_is_stored_once(
    service: BaseMemoryService, said: Said
) -> None:
    """ADK's own service deduplicates on the event's id."""
    first = said("user", "Tea in Berlin.")
    coffee = types.Content(role="user", parts=[types.Part(text="Coffee in Berlin.")])
    again = first.model_copy(update={"content": coffee, "timestamp": first.timestamp + 5})

    async def check() -> None:
        await service.add_session_to_memory(session([first]))
        add = service.add_events_to_memory
        await add(app_name=APP, user_id=USER, session_id="s-1", events=[again])
        await add(app_name=APP, user_id=USER, session_id="s-1", events=[again])
        assert await texts(service, "Berlin") == ["Tea in Berlin."]

    run(check)


# --- what only recallery has ------------------------------------------------------------


def test_events_are_raw_turns_and_results_name_their_entries(world: World, said: Said) -> None:
    service = build("Recallery over AsyncClient", world)
    user, agent = said("user", "I moved to Berlin."), said("helper_agent", "Berlin, noted.")
    run(lambda: service.add_session_to_memory(session([user, agent])))
    reply, turn = world.turns(world.notes)
    assert turn.content == "User Input: I moved to Berlin.\nAgent Response: "
    assert reply.content == "User Input: \nAgent Response: Berlin, noted."
    assert (turn.agent_id, turn.user_id, turn.session_id) == (APP, USER, f"s-1#{user.id}")
    assert (reply.agent_id, reply.user_id, reply.session_id) == (APP, USER, f"s-1#{agent.id}")
    assert turn.valid_at.timestamp() == user.timestamp

    async def check() -> None:
        found = await service.search_memory(app_name=APP, user_id=USER, query="moved Berlin")
        first = found.memories[0]
        assert (first.id, first.author, first.content.role) == (str(turn.message_id), "user",
                                                                 "user")  # fmt: skip
        assert first.custom_metadata["type"] == "raw"
        assert (first.custom_metadata["session_id"], first.custom_metadata["event_id"]) == (
            "s-1",
            user.id,
        )
        assert first.timestamp == turn.valid_at.replace(microsecond=0).isoformat()
        answer = next(m for m in found.memories if m.id == str(reply.message_id))
        assert (answer.author, answer.content.role) == (APP, "model")

    run(check)


def test_add_memory_states_facts(world: World) -> None:
    facts = make_memory(world.engine, world.alice, "facts", ["raw", "semantic"])
    service = build("Recallery over AsyncClient", world, facts.id)
    fact = MemoryEntry(content=types.Content(parts=[types.Part(text="The user likes tea.")]))

    async def check() -> None:
        await service.add_memory(app_name=APP, user_id=USER, memories=[fact])
        (found,) = (await service.search_memory(app_name=APP, user_id=USER, query="tea")).memories
        assert (_text(found), found.author, found.custom_metadata["type"]) == (
            "The user likes tea.", "user", "semantic"
        )  # fmt: skip
        assert (
            await service.search_memory(app_name=APP, user_id="u-7", query="tea")
        ).memories == []

    run(check)


def test_a_key_scoped_to_one_memory_gets_nothing_of_another(world: World, said: Said) -> None:
    scoped = world.async_client(world.key(scope=[world.notes.id]))
    before = world.contents(world.diary)
    diary_turn = str(before[0][0])
    fact = MemoryEntry(content=types.Content(parts=[types.Part(text="The door code is 0000.")]))

    async def check() -> None:
        for memory in (world.diary, world.bobs):
            service = RecalleryMemoryService(scoped, memory.id)
            with pytest.raises(NotFound):
                await service.add_session_to_memory(session([said("user", "Overwrite it.")]))
            with pytest.raises(NotFound):
                await service.add_memory(app_name=APP, user_id=USER, memories=[fact])
            with pytest.raises(NotFound):
                await service.delete_memory(app_name="", user_id="", memory_id=diary_turn)
            for user in (USER, "", world.alice.user_id):
                found = await service.search_memory(app_name="", user_id=user, query="door code")
                assert found.memories == []  # a search drops the memories it cannot see

    run(check)
    assert world.contents(world.diary) == before


def test_a_read_only_key_reads_but_cannot_write(world: World, said: Said) -> None:
    events = [said("user", "I moved to Berlin.")]
    run(lambda: build("Recallery over Client", world).add_session_to_memory(session(events)))
    before = world.contents(world.notes)
    reader = RecalleryMemoryService(world.async_client(world.key(capabilities=["read"])),
                                    world.notes.id)  # fmt: skip
    fact = MemoryEntry(content=types.Content(parts=[types.Part(text="A new fact.")]))

    async def check() -> None:
        assert await texts(reader, "Berlin") == ["I moved to Berlin."]
        events.append(said("user", "And now Lyon."))
        with pytest.raises(Forbidden, match="'write'"):
            await reader.add_session_to_memory(session(events))
        with pytest.raises(Forbidden, match="'write'"):
            await reader.add_memory(app_name=APP, user_id=USER, memories=[fact])
        with pytest.raises(Forbidden, match="'manage'"):
            await reader.delete_memory(app_name=APP, user_id=USER, memory_id=str(before[0][0]))

    run(check)
    assert world.contents(world.notes) == before
