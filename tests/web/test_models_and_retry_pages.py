"""Models, no longer guesswork, and what happened, visible: the forms offer the configured models
and say what an id resolves to; the configuration page tests the chat model; the jobs page
retries a failed extraction (one turn, or every failed one); an erased entry's page shows its
tombstone and receipt. Each refused path is checked too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from tests.support.web import Login, form_token

from recallery import Engine, Memory, Principal
from recallery.jobs import Worker, WorkerConfig
from recallery.models import JobState
from recallery.providers.chat import OpenAIChatModel
from recallery.providers.registry import ModelRegistry
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FakeLLM, FrozenClock, Reply

LLM_ID = "fake-model@fake"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def engine(
    store: Store, embedder: DeterministicEmbedder, clock: FrozenClock, llm: FakeLLM
) -> Iterator[Engine]:
    """The shared engine, with provider ``fake`` answered by the fake chat server."""
    models = ModelRegistry(
        {"fake": llm.provider()},
        builtin=lambda: embedder,
        chat=lambda name, cfg: OpenAIChatModel(name, cfg, timeout=5.0),
    )
    e = Engine(store, models=models, clock=clock)
    yield e
    e.usage.close()
    e.request_recorder.close()


@pytest.fixture
def mem(engine: Engine, alice: Principal) -> Memory:
    return engine.create_memory(
        alice, name="agent", memory_type=["raw", "semantic"], embd_id="x@Builtin", llm_id=LLM_ID
    )


def _key(engine: Engine, alice: Principal, *capabilities: str) -> str:
    _, key = engine.create_api_key(alice, alice.user_id, capabilities=list(capabilities))
    return key


def _facts(*texts: str) -> dict[str, object]:
    return {"semantic": [{"content": t, "valid_at": None} for t in texts]}


# --- the forms ------------------------------------------------------------------------------


def test_the_forms_offer_the_configured_models_and_say_what_they_resolve_to(
    login: Login, alice_key: str, mem: Memory, llm: FakeLLM
) -> None:
    browser = login(alice_key)
    listing = browser.get("/").text
    assert '<datalist id="offered-models">' in listing
    assert '<option value="all-MiniLM-L6-v2@Builtin">the local all-MiniLM-L6-v2' in listing
    assert 'value="multilingual-e5-small@Builtin">the local multilingual-e5-small' in listing
    assert f'<option value="model@fake">model at {llm.provider().base_url}' in listing
    assert listing.count('list="offered-models"') == 2  # both model fields
    config = browser.get(f"/memories/{mem.id}/config").text
    assert "Resolves to the local all-MiniLM-L6-v2 (384 dimensions" in config
    assert (
        f"Resolves to fake-model at {llm.provider().base_url} (provider &#39;fake&#39;)" in config
    )


def test_a_chat_model_of_an_unconfigured_provider_says_which_variable_to_set(
    login: Login, alice_key: str, engine: Engine, alice: Principal
) -> None:
    """Before: "Resolves to provider 'openai' is not configured." (issue 54 item 5)."""
    mem = engine.create_memory(
        alice, name="заметки", memory_type=["raw"], embd_id="x@Builtin", llm_id="gpt-4o@OpenAI"
    )
    config = login(alice_key).get(f"/memories/{mem.id}/config").text
    said = re.search(r'<span class="muted small" id="llm-resolves">([^<]*)</span>', config)
    assert said and said.group(1) == (
        "Provider &#39;openai&#39; is not configured, so this model cannot be used yet: set "
        "RECALLERY_PROVIDER_OPENAI_BASE_URL to its OpenAI-compatible endpoint (and "
        "RECALLERY_PROVIDER_OPENAI_API_KEY if it needs a key), then restart recallery."
    )
    assert "Resolves to provider" not in config


# --- test the chat model --------------------------------------------------------------------


def test_the_chat_model_test_shows_the_answer_or_the_error_beside_its_button(
    login: Login, alice_key: str, mem: Memory, llm: FakeLLM
) -> None:
    browser = login(alice_key)
    url = f"/memories/{mem.id}/config/test-chat"
    token = form_token(browser.get(f"/memories/{mem.id}/config").text)
    llm.push(Reply.text("OK"))
    shown = browser.post(url, data={"csrf": token}, headers={"HX-Request": "true"})
    assert shown.status_code == 200
    check = re.search(r'<span id="chat-check".*?</form>', shown.text, re.S)
    assert check and "ok</span> fake-model@fake answered “OK”" in check.group(0)
    llm.push(Reply.http_error(401, "invalid api key"))
    failed = browser.post(url, data={"csrf": token}).text  # without script: the whole page
    assert "<h2>Settings</h2>" in failed and "invalid api key" in failed
    assert 'class="badge job-failed">failed</span>' in failed
    assert llm.pending == 0


def test_a_key_without_manage_may_not_test_the_chat_model(
    login: Login, engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    browser = login(_key(engine, alice, "read", "write"))
    page = browser.get(f"/memories/{mem.id}/config").text
    assert re.search(
        r"disabled aria-disabled=\"true\" title=\"[^\"]*manage[^\"]*\">Test chat", page
    )
    url = f"/memories/{mem.id}/config/test-chat"
    answer = browser.post(url, data={"csrf": form_token(page)})
    check = re.search(r'<span id="chat-check".*?</form>', answer.text, re.S)
    assert check and 'class="badge job-failed">failed</span>' in check.group(0)
    assert "manage" in check.group(0), check.group(0)
    assert llm.chat_requests() == []  # no model call was made


# --- retry extraction -----------------------------------------------------------------------


def _jobs(engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM) -> tuple[int, int]:
    """Two turns: the first extracted, the second's reply unparseable. Their ids."""
    (fine,) = engine.add_turn(alice, [mem.id], user_input="I like tea", agent_response="ok")
    (bad,) = engine.add_turn(alice, [mem.id], user_input="I live in Berlin", agent_response="ok")
    llm.push(Reply.json(_facts("The user likes tea")), Reply.text("no json here"))
    worker = Worker(engine, config=WorkerConfig(), owner="w")
    assert worker.run_once() and worker.run_once()
    return fine.message_id, bad.message_id


def test_a_failed_job_has_a_retry_and_retrying_it_extracts_the_turn(
    login: Login, alice_key: str, engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    fine, bad = _jobs(engine, alice, mem, llm)
    browser = login(alice_key)
    page = browser.get(f"/memories/{mem.id}/jobs").text
    retry = f'action="/memories/{mem.id}/entries/{{}}/extract"'
    assert retry.format(bad) in page and retry.format(fine) not in page  # done: no retry
    assert 'id="retry-failed"' in page
    answer = browser.post(
        f"/memories/{mem.id}/entries/{bad}/extract",
        data={"csrf": form_token(page), "next": f"/memories/{mem.id}/jobs"},
    )
    assert (answer.status_code, answer.headers["location"]) == (303, f"/memories/{mem.id}/jobs")
    after = browser.get(f"/memories/{mem.id}/jobs").text
    assert f"Turn {bad}&#39;s extraction is queued again" in after
    assert retry.format(bad) not in after.split("<table")[1].split("</tr>")[1]  # newest: queued
    llm.push(Reply.json(_facts("The user lives in Berlin")))
    assert Worker(engine, config=WorkerConfig(), owner="w").run_once()
    facts = browser.get(f"/memories/{mem.id}/facts").text
    assert "The user lives in Berlin" in facts and "The user likes tea" in facts


def test_retry_failed_queues_only_the_failed_turns_and_a_read_key_is_refused(
    login: Login, alice_key: str, engine: Engine, alice: Principal, mem: Memory, llm: FakeLLM
) -> None:
    _, bad = _jobs(engine, alice, mem, llm)
    reader = login(_key(engine, alice, "read"))
    page = reader.get(f"/memories/{mem.id}/jobs").text
    assert re.search(r'<button type="submit"\s+disabled[^>]*>Retry failed', page)
    refused = reader.post(f"/memories/{mem.id}/jobs/retry", data={"csrf": form_token(page)})
    assert refused.status_code == 303
    assert "Not retried" in reader.get(f"/memories/{mem.id}/jobs").text
    assert engine.jobs(alice, mem.id, state=JobState.QUEUED).total == 0
    browser = login(alice_key)
    token = form_token(browser.get(f"/memories/{mem.id}/jobs").text)
    assert browser.post(f"/memories/{mem.id}/jobs/retry", data={"csrf": token}).status_code == 303
    assert "Queued 1 failed extraction again." in browser.get(f"/memories/{mem.id}/jobs").text
    queued = engine.jobs(alice, mem.id, state=JobState.QUEUED).items
    assert [j.message_id for j in queued] == [bad]


# --- an erased entry's tombstone ------------------------------------------------------------


def test_an_erased_entrys_page_shows_its_tombstone_and_receipt(
    login: Login, alice_key: str, engine: Engine, alice: Principal, bob: Principal, mem: Memory
) -> None:
    (gone,) = engine.add_turn(alice, [mem.id], user_input="my card is 4111", agent_response="ok")
    (kept,) = engine.add_turn(alice, [mem.id], user_input="I like tea", agent_response="ok")
    engine.erase(alice, mem.id, gone.message_id, reason="asked by the user")
    browser = login(alice_key)
    page = browser.get(f"/memories/{mem.id}/entries/{gone.message_id}")
    assert page.status_code == 404
    assert f"Entry {gone.message_id} was erased" in page.text
    assert '<dd id="erased-reason">asked by the user</dd>' in page.text
    assert f"alice ({alice.user_id})" in page.text
    assert f'<dd id="erased-ids">{gone.message_id}</dd>' in page.text
    assert "entry.erase at" in page.text
    assert "4111" not in page.text  # never the text
    assert browser.get(f"/memories/{mem.id}/entries/{kept.message_id}").status_code == 200
    never = browser.get(f"/memories/{mem.id}/entries/999999")
    assert never.status_code == 404 and "tombstone" not in never.text  # never erased: not found
    _, bob_key = engine.create_api_key(bob, bob.user_id)
    stranger = login(bob_key).get(f"/memories/{mem.id}/entries/{gone.message_id}")
    assert stranger.status_code == 404 and "asked by the user" not in stranger.text
