"""What a newcomer meets first: API docs that work offline, a favicon, a page (not JSON) at an
unknown address, a loud warning when extraction cannot happen, and CLI commands that find
memories and never import a turn twice."""

from __future__ import annotations

import json
import re
import shlex
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from tests.support.api import API, Account, ok

from recallery import Client, Engine, RecalleryWarning
from recallery.cli import main
from recallery.cli.serve import command
from recallery.providers.registry import ModelRegistry
from recallery.settings import ProviderConfig
from recallery.testing import DeterministicEmbedder

UNCONFIGURED = "gpt-4o-mini@OpenAI"

ROOT = Path(__file__).resolve().parents[2]


def test_api_docs_use_only_this_servers_assets(http: Callable[[str | None], TestClient]) -> None:
    client = http(None)
    page = client.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert "/static/swagger-ui-bundle.js" in sources and "/static/swagger-ui.css" in sources
    assert all(s.startswith("/") for s in sources), sources  # nothing from a CDN
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    bundle = client.get("/static/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and "SwaggerUIBundle" in bundle.text
    assert client.get("/static/docs.js").status_code == 200
    assert client.get("/redoc").status_code == 404


def test_a_favicon_is_served(http: Callable[[str | None], TestClient]) -> None:
    icon = http(None).get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")


def test_an_unknown_address_is_a_page_with_navigation(
    http: Callable[[str | None], TestClient],
) -> None:
    client = http(None)
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert 'href="/docs"' in response.text and 'href="/login"' in response.text
    # the API keeps its envelope
    api = client.get(f"{API}/no/such/route")
    assert api.status_code == 404 and api.json()["code"] == 404


def test_a_memorys_natural_search_and_audit_addresses_lead_to_their_pages(
    http: Callable[[str | None], TestClient],
) -> None:
    client = http(None)
    search = client.get("/memories/abc/search", follow_redirects=False)
    assert search.status_code == 307 and search.headers["location"] == "/search?memory_id=abc"
    audit = client.get("/memories/abc/audit", follow_redirects=False)
    assert audit.headers["location"] == "/audit?memory_id=abc"


def test_an_unconfigured_chat_provider_is_accepted_with_a_warning(
    as_alice: TestClient, sdk: Callable[[str | None], Client], alice: Account
) -> None:
    body = {"name": "n", "memory_type": ["raw", "semantic"], "embd_id": "x@Builtin"}
    created = ok(as_alice.post(f"{API}/memories", json={**body, "llm_id": UNCONFIGURED}))
    (warning,) = created["warnings"]
    assert "llm_id" in warning and "RECALLERY_PROVIDER_OPENAI_BASE_URL" in warning
    config = ok(as_alice.get(f"{API}/memories/{created['id']}/config"))
    assert config["warnings"] == [warning]
    with pytest.warns(RecalleryWarning, match="not configured"):
        sdk(alice.key).create_memory("m", ["raw"], "x@Builtin", UNCONFIGURED)
    with pytest.warns(RecalleryWarning, match="not configured"):
        sdk(alice.key).update_memory(created["id"], {"description": "d"})


def test_a_configured_chat_provider_gives_no_warning(tmp_path: Path) -> None:
    providers = {"openai": ProviderConfig(base_url="http://127.0.0.1:1/v1", api_key="k")}
    models = ModelRegistry(providers, builtin=DeterministicEmbedder)
    with Engine.open(tmp_path, models=models) as engine:
        me = engine.principal(engine.create_user("me").id)
        memory = engine.create_memory(
            me, name="n", memory_type=["raw"], embd_id="x@Builtin", llm_id=UNCONFIGURED
        )
        assert engine.memory_warnings(memory) == []
        other = engine.update_memory(me, memory.id, {"llm_id": "qwen@Ollama"})
        assert "ollama" in engine.memory_warnings(other)[0]


def _cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.model
def test_memory_list_export_hint_and_import_twice(tmp_path: Path) -> None:
    with Engine.open(tmp_path) as engine:
        tom = engine.principal(engine.create_user("tom").id)
        memory = engine.create_memory(
            tom, name="diary", memory_type=["raw"], embd_id="x@Builtin", llm_id=UNCONFIGURED
        )
        engine.add_turn(
            tom, [memory.id], user_input="I moved to Lyon", agent_response="", user_id="u1"
        )
        engine.add_turn(tom, [memory.id], user_input="I like tea", agent_response="", user_id="u1")
    code, out, _ = _cli(tmp_path, "memory", "list")
    assert code == 0
    header, *rows = out.splitlines()
    assert header == "id\tname\towner\ttypes\tentries"
    assert rows == [f"{memory.id}\tdiary\ttom\traw\t2"]

    code, _, err = _cli(tmp_path, "export", memory.id)  # as the admin, who cannot see it
    assert code == 1 and "pass --user tom" in err
    code, exported, _ = _cli(tmp_path, "export", memory.id, "--user", "tom")
    assert code == 0 and len(exported.splitlines()) == 3

    source = tmp_path / "diary.jsonl"
    source.write_text(exported)
    args = ("import", str(source), "--memory-id", memory.id, "--user", "tom")
    code, out, err = _cli(tmp_path, *args)
    assert code == 0, err
    report = json.loads(out)
    assert (report["imported"], report["already_stored"]) == (0, 2)
    assert "2 turn(s) of the file are in the memory already" in err
    with Engine.open(tmp_path) as engine:
        assert engine.get_memory(engine.principal(tom.user_id), memory.id).entry_count == 2
    # a file with one new turn adds just that one
    lines = exported.splitlines()
    new_turn = json.loads(lines[1]) | {"content": "I adopted a cat", "message_id": 99}
    source.write_text("\n".join([*lines, json.dumps(new_turn)]))
    report = json.loads(_cli(tmp_path, *args)[1])
    assert (report["imported"], report["already_stored"]) == (1, 2)


@pytest.mark.model
def test_the_readme_library_snippet_runs_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's library example, exactly as written, in a fresh directory, twice."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### As a Python library", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert not (tmp_path / "data").exists()  # its own directory, not the one serve uses
    with Engine.open(tmp_path / "recallery-demo") as engine:  # the second run added nothing
        me = engine.principal(engine.ensure_user("me").id)
        (memory,) = engine.list_memories(me).items
        assert engine.list_messages(me, memory.id).total == 1
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "/recallery-demo/" in ignored  # its data folder stays out of git


def test_the_readmes_command_line_runs_as_written(tmp_path: Path) -> None:
    """Each line of the README's command-line block that needs no id of yours, on a fresh
    data directory (the user it names exists there: the administrator)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("The command line at a glance", 1)[1].split("```bash\n", 1)[1]
    lines = [line.split("#", 1)[0].strip() for line in block.split("```", 1)[0].splitlines()]
    runnable = [shlex.split(line)[1:] for line in lines if line and "<" not in line]
    assert [
        "key",
        "create",
        "--user",
        "admin",
        "--capability",
        "read",
        "--capability",
        "write",
    ] in (runnable)
    for args in runnable:
        code, out, err = _cli(tmp_path, *args)
        assert code == 0, (args, out, err)


def test_the_lost_key_hint_names_a_command_that_runs_from_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/serve runs .venv/bin/recallery, which is not on PATH: the hint says so."""
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "recallery").write_text("#!/bin/sh\n")
    (venv / "recallery").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [str(venv / "recallery"), "serve"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert command() == ".venv/bin/recallery"
    monkeypatch.setenv("PATH", f"{venv}:/usr/bin")  # activated: the name on PATH is this one
    assert command() == "recallery"
