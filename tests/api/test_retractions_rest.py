"""Which fact, replayed through REST (issue 53): a retraction or a reversed preference is never
stored as a repeat of what it retracts, however close the two statements lie. Three customers
in one support memory (one writing Chinese) and a fourth who holds the same first statement;
the OpenAI-compatible chat model judges every close statement it is asked about."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, Account, ok, replay, support_memory
from tests.support.extraction import judgement, replying, scripted

from recallery import Engine
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FrozenClock

#: (user, what they said, the fact extracted from it), in writing order. The test embedder
#: counts words, so each retraction lies close to what it retracts (a reversal at cosine 1).
TURNS: list[tuple[str, str, str]] = [
    ("ana", "I prefer tea over coffee.", "The user prefers tea over coffee"),
    ("maria", "Tea over coffee for me, always.", "The user prefers tea over coffee"),
    ("tom", "I'm gluten intolerant.", "The user is gluten intolerant"),
    ("xiaoming", "我喜欢喝茶。", "用户 喜欢 喝 茶"),
    ("ana", "These days I prefer coffee over tea.", "The user prefers coffee over tea"),
    ("tom", "The gluten thing was a misdiagnosis.", "The user is not gluten intolerant"),
    ("xiaoming", "我现在不喜欢喝茶了。", "用户 不 喜欢 喝 茶"),
]
FACT_OF = {said: fact for _, said, fact in TURNS}
#: What the chat model was asked to judge: the new candidate of each question.
ASKED: list[str] = []


def _judge(candidate: str) -> dict[str, object]:
    """Every judgement asked answers "supersedes 1"; the candidate is noted."""
    ASKED.append(candidate)
    return judgement("supersedes", 1)


@pytest.fixture
def engine(store: Store, embedder: DeterministicEmbedder, clock: FrozenClock) -> Iterator[Engine]:
    ASKED.clear()
    with replying(scripted(FACT_OF, _judge), store, embedder, clock) as e:
        yield e


def _facts(client: TestClient, memory_id: str, user: str) -> list[str]:
    page = ok(client.get(f"{API}/memories/{memory_id}/facts", params={"user_id": user}))
    return sorted(str(e["content"]) for e in page["items"])


def test_each_retraction_replaces_its_own_persons_statement_and_is_never_a_repeat(
    engine: Engine,
    http: Callable[[str | None], TestClient],
    alice: Account,
    clock: FrozenClock,
) -> None:
    client = http(alice.key)
    memory_id = support_memory(client)
    replay(engine, client, memory_id, clock, TURNS)
    # every retraction went to the chat model, none was merged by closeness
    assert all(any(fact in asked for asked in ASKED) for _, _, fact in TURNS[4:]), ASKED
    assert _facts(client, memory_id, "ana") == ["The user prefers coffee over tea"]
    assert _facts(client, memory_id, "tom") == ["The user is not gluten intolerant"]
    assert _facts(client, memory_id, "xiaoming") == ["用户 不 喜欢 喝 茶"]
    # maria holds ana's first statement; ana's reversal leaves it current
    assert _facts(client, memory_id, "maria") == ["The user prefers tea over coffee"]
    # each retracted statement is the older version of its retraction, of the same person,
    # and never a repeat's evidence
    page = ok(client.get(f"{API}/memories/{memory_id}/facts", params={"page_size": 100}))
    for fact in page["items"]:
        history = ok(client.get(f"{API}/messages/{memory_id}:{fact['message_id']}/history"))
        said = [(str(v["user_id"]), str(v["content"])) for v in history]
        assert {u for u, _ in said} == {fact["user_id"]}
        if fact["user_id"] != "maria":
            old = {"ana": TURNS[0], "tom": TURNS[2], "xiaoming": TURNS[3]}[fact["user_id"]][2]
            assert said == [(fact["user_id"], old), (fact["user_id"], fact["content"])]
        else:
            assert said == [("maria", "The user prefers tea over coffee")]
    # a search for the customer's drink finds what holds now, not the retracted preference
    found = ok(
        client.get(
            f"{API}/messages/search",
            params={
                "query": "Does the user prefer tea or coffee?",
                "memory_id": memory_id,
                "user_id": "ana",
                "top_n": 10,
            },
        )
    )
    contents = [h["content"] for h in found]
    assert "The user prefers coffee over tea" in contents
    assert "The user prefers tea over coffee" not in contents
