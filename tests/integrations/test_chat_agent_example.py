"""``examples/chat_agent.py`` run as a user runs it: a subprocess talking to recallery over real
HTTP (the app on a local port, over the test's engine) and to the fake OpenAI-compatible chat
server; what it recalls reaches the prompt, what it is told is kept, and a key decides."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support.integrations import DIARY_SECRET, World

from recallery.testing import FakeLLM

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_agent.py"


def answer(request: dict[str, Any]) -> str:
    """The fake model: it answers from the memory block in its system prompt, if any."""
    system = request["messages"][0]["content"]
    return "You live in Berlin." if "Berlin" in system else "Noted."


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(answer) as server:
        yield server


def chat(
    url: str, llm: FakeLLM, key: str, memory_id: str, *lines: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECALLERY_API_KEY": key, "OPENAI_API_KEY": "test-key",
           "OPENAI_BASE_URL": llm.url}  # fmt: skip
    command = [sys.executable, str(EXAMPLE), "--url", url, "--memory", memory_id,
               "--model", "fake-model", "--user", "u-42", "--session", "chat-1"]  # fmt: skip
    return subprocess.run(command, input="".join(f"{line}\n" for line in lines), env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_the_example_recalls_into_its_prompt_and_keeps_each_turn(
    world: World, url: str, llm: FakeLLM
) -> None:
    done = chat(url, llm, world.key(), world.notes.id, "I moved to Berlin last spring.",
                "Which city did I move to?", "", "never read")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["assistant> Noted.", "assistant> You live in Berlin."]
    first, second = (r["messages"] for r in llm.chat_requests())
    assert [m["role"] for m in first] == ["system", "user"]
    assert "I moved to Berlin last spring." in second[0]["content"]  # recalled, fenced
    assert "<<<entry-" in second[0]["content"] and [m["role"] for m in second[1:]] == [
        "user", "assistant", "user"
    ]  # fmt: skip
    turns = world.turns(world.notes)[::-1]
    assert [t.content for t in turns] == [
        "User Input: I moved to Berlin last spring.\nAgent Response: Noted.",
        "User Input: Which city did I move to?\nAgent Response: You live in Berlin.",
    ]
    assert {(t.session_id, t.agent_id, t.user_id) for t in turns} == {
        ("chat-1", "chat-agent", "u-42")
    }


def load_example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_a_key_decides_what_the_example_sees_and_keeps(
    world: World,
    url: str,
    llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In process, to spare a start: the same main() with the key and stdin in place."""
    example = load_example(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", llm.url)

    def run(key: str, memory_id: str, line: str) -> str:
        monkeypatch.setenv("RECALLERY_API_KEY", key)
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"{line}\n"))
        assert example.main(["--url", url, "--memory", memory_id, "--model", "fake-model"]) == 1
        return capsys.readouterr().err

    scoped = world.key(scope=[world.notes.id])
    assert "NotFound" in run(scoped, world.diary.id, "What is the door code in Berlin?")
    reader = world.key(capabilities=["read"])
    assert "lacks the 'write' capability" in run(reader, world.notes.id, "I moved to Berlin.")
    prompts = str([r["messages"] for r in llm.chat_requests()])
    assert "4711" not in prompts and "8080" not in prompts and len(llm.chat_requests()) == 2
    assert world.turns(world.notes) == [] and world.contents(world.diary)[0][1].startswith(
        f"User Input: {DIARY_SECRET}"
    )
