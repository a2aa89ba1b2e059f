"""RAGFlow's own published SDK (``ragflow-sdk``), unchanged, against a live ``recallery serve``.

The server runs as a subprocess on a free port with a fresh data directory, the real local
embedder and the background worker; the SDK talks to it over real HTTP. Every memory method
the SDK has is called, and each result is checked.

Install the SDK as ``scripts/setup`` does (it declares Python >= 3.12 but runs on 3.11, and
needs only ``requests``)::

    pip install requests && pip install --no-deps --ignore-requires-python ragflow-sdk==0.27.3
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from recallery.testing.serve import live_serve

pytestmark = [pytest.mark.model, pytest.mark.slow]

INSTALL = (
    "pip install requests && pip install --no-deps --ignore-requires-python ragflow-sdk==0.27.3"
)
ADMIN_KEY = "rc-live-test-admin-key"
EMBD = "BAAI/bge-small-en-v1.5@Builtin"
LLM = "glm-4-flash@ZHIPU-AI"
START_TIMEOUT_S = 90.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A live ``recallery serve``: its base URL and its log file."""
    data = tmp_path_factory.mktemp("live-data")
    env = {"RECALLERY_ADMIN_API_KEY": ADMIN_KEY}
    with live_serve(data, env, timeout_s=START_TIMEOUT_S) as found:
        yield found


@pytest.fixture(scope="module")
def rag(server: tuple[str, Path]) -> Any:
    try:
        from ragflow_sdk import RAGFlow
    except ImportError as exc:  # a missing SDK is a setup error, never a silent skip
        pytest.fail(f"ragflow-sdk is not installed ({exc}); run: {INSTALL}")
    return RAGFlow(api_key=ADMIN_KEY, base_url=server[0])


def test_serve_announces_where_it_is(server: tuple[str, Path]) -> None:
    url, log = server
    text = log.read_text()
    assert f"{url}/api/v1" in text and f"{url}/docs" in text
    assert "RECALLERY_ADMIN_API_KEY" in text
    assert httpx.get(f"{url}/openapi.json").json()["info"]["title"] == "recallery"


def test_every_memory_method_of_the_sdk(rag: Any) -> None:
    from ragflow_sdk import Memory

    # create_memory, list_memory
    memory = rag.create_memory("sdk notes", ["raw", "semantic"], EMBD, LLM)
    assert isinstance(memory, Memory)
    assert (memory.name, memory.memory_type, memory.embd_id, memory.llm_id) == (
        "sdk notes",
        ["raw", "semantic"],
        EMBD,
        LLM,
    )
    assert (memory.permissions, memory.memory_size, memory.forgetting_policy) == (
        "me",
        5242880,
        "FIFO",
    )
    other = rag.create_memory("sdk other", ["raw"], EMBD, LLM)
    listed = rag.list_memory()
    assert listed["code"] == 0 and listed["total_count"] == 2
    assert {m.id for m in listed["memory_list"]} == {memory.id, other.id}
    assert [m.id for m in rag.list_memory(memory_type="semantic")["memory_list"]] == [memory.id]
    assert [m.id for m in rag.list_memory(keywords="OTHER")["memory_list"]] == [other.id]
    assert rag.list_memory(page=2, page_size=1)["total_count"] == 2
    assert len(rag.list_memory(page=2, page_size=1)["memory_list"]) == 1

    # add_message
    said = rag.add_message(
        [memory.id], "agent-1", "session-1", "I moved to Lisbon last March.", "Enjoy Lisbon!", "u-1"
    )
    assert said == "All add to task."
    rag.add_message(
        [memory.id], "agent-2", "session-2", "I drink espresso every morning.", "Noted."
    )
    rag.add_message([memory.id, other.id], "agent-2", "session-3", "My sister is a dentist.", "Ok.")

    # search_message: the real embedder finds the paraphrase; filters exclude the rest
    found = rag.search_message("Which city does the user live in now?", [memory.id])
    assert "Lisbon" in found[0]["content"]
    assert {"message_id", "message_type", "memory_id", "valid_at", "status", "content"} <= set(
        found[0]
    )
    assert found[0]["user_id"] == "u-1"
    by_agent = rag.search_message("morning coffee drink", [memory.id], agent_id="agent-2")
    assert by_agent and all(f["agent_id"] == "agent-2" for f in by_agent)
    assert "espresso" in by_agent[0]["content"]
    both = rag.search_message("sister dentist", [memory.id, other.id], top_n=2)
    assert {f["memory_id"] for f in both} == {memory.id, other.id}

    # get_recent_messages
    recent = rag.get_recent_messages([memory.id])
    assert len(recent) == 3 and "dentist" in recent[0]["content"]
    assert [
        r["session_id"] for r in rag.get_recent_messages([memory.id], session_id="session-1")
    ] == ["session-1"]
    assert len(rag.get_recent_messages([memory.id], limit=1)) == 1

    # Memory.update, Memory.get_config
    assert memory.update({"description": "from the SDK", "temperature": 0.25}) is memory
    assert (memory.description, memory.temperature) == ("from the SDK", 0.25)
    memory.description = "stale"
    assert memory.get_config().description == "from the SDK"

    # Memory.list_memory_messages
    data = memory.list_memory_messages()
    assert data["storage_type"] == "table" and data["messages"]["total_count"] == 3
    rows = data["messages"]["message_list"]
    assert all({"message_id", "extract", "task"} <= set(r) for r in rows)
    assert all(r["task"]["doc_id"] == memory.id for r in rows)
    lisbon = next(r for r in rows if r["session_id"] == "session-1")
    filtered = memory.list_memory_messages(agent_id="agent-1")["messages"]["message_list"]
    assert [r["message_id"] for r in filtered] == [lisbon["message_id"]]
    assert memory.list_memory_messages(keywords="session-3")["messages"]["total_count"] == 1

    # Memory.get_message_content
    content = memory.get_message_content(lisbon["message_id"])
    assert content["content"].startswith("User Input: I moved to Lisbon")
    assert len(content["content_embed"]) == 384
    assert content["id"] == f"{memory.id}_{lisbon['message_id']}"

    # Memory.update_message_status: disabled turns leave search, stay in recent
    assert memory.update_message_status(lisbon["message_id"], False) is True
    assert all(
        f["message_id"] != lisbon["message_id"] for f in rag.search_message("Lisbon", [memory.id])
    )
    assert lisbon["message_id"] in [r["message_id"] for r in rag.get_recent_messages([memory.id])]
    assert memory.update_message_status(lisbon["message_id"], True) is True
    assert rag.search_message("Lisbon", [memory.id])[0]["message_id"] == lisbon["message_id"]

    # Memory.forget_message: gone from search and recent, still listed with forget_at
    assert memory.forget_message(lisbon["message_id"]) is True
    assert all(
        f["message_id"] != lisbon["message_id"] for f in rag.search_message("Lisbon", [memory.id])
    )
    assert lisbon["message_id"] not in [
        r["message_id"] for r in rag.get_recent_messages([memory.id])
    ]
    rows = memory.list_memory_messages()["messages"]["message_list"]
    assert next(r for r in rows if r["message_id"] == lisbon["message_id"])["forget_at"] is not None

    # errors come back as RAGFlow's messages
    with pytest.raises(Exception, match=re.escape("Memory name cannot be empty or whitespace.")):
        rag.create_memory("  ", ["raw"], EMBD, LLM)
    with pytest.raises(Exception, match="not found"):
        memory.forget_message(987654)

    # delete_memory
    assert rag.delete_memory(other.id) is None
    assert [m.id for m in rag.list_memory()["memory_list"]] == [memory.id]
    with pytest.raises(Exception, match=re.escape(f"Memory '{other.id}' not found.")):
        other.get_config()


def test_the_worker_runs_inside_serve(rag: Any) -> None:
    """The extraction job of each turn reaches an outcome (skipped: no chat model configured)."""
    memory = rag.create_memory("jobs", ["raw", "semantic"], EMBD, LLM)
    rag.add_message([memory.id], "agent", "session", "I like green tea.", "Noted.")
    deadline = time.monotonic() + 30
    task: dict[str, Any] = {}
    while time.monotonic() < deadline:
        (row,) = memory.list_memory_messages()["messages"]["message_list"]
        task = row["task"]
        if task["progress"] != 0:
            break
        time.sleep(0.25)
    assert task["progress"] == -1 and "no chat model" in task["progress_msg"]


def test_a_wrong_key_is_refused(server: tuple[str, Path]) -> None:
    from ragflow_sdk import RAGFlow

    with pytest.raises(Exception, match=r"<Unauthorized '401: Unauthorized'>"):
        RAGFlow(api_key="wrong", base_url=server[0]).list_memory()


def test_wrong_keys_never_lock_out_the_sdk_s_valid_key(rag: Any, server: tuple[str, Path]) -> None:
    """25 wrong keys from loopback, each claiming another address: the forwarded header is not
    trusted (serve names no proxy), so they are counted together and the last ones slowed; the
    SDK's valid key from the same address still works."""
    answers = [
        httpx.get(
            f"{server[0]}/api/v1/memories",
            headers={"Authorization": f"Bearer rc-wrong-{n}", "X-Forwarded-For": f"198.51.100.{n}"},
        ).status_code
        for n in range(25)
    ]
    assert answers[0] == 401 and answers[-1] == 429 and set(answers) == {401, 429}
    assert isinstance(rag.list_memory()["memory_list"], list)
