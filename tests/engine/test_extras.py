"""An optional part used without its extra ends in one line naming what to install.

Each test hides the part's modules (``sys.modules[name] = None`` makes them unimportable) and
runs the part the way a user would.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import recallery
from recallery import cli
from recallery.__main__ import main as console_script
from recallery.errors import MissingExtra, RecalleryError
from recallery.extras import require
from recallery.settings import Settings
from recallery.store import open_store

SERVER_LINE = (
    'needs the server extra: pip install ".[server]" in a clone of recallery '
    "(it is not on PyPI yet)"
)
POSTGRES_LINE = (
    'the PostgreSQL store needs the postgres extra: pip install ".[postgres]" in a clone of '
    "recallery (it is not on PyPI yet)"
)


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_require_names_the_extra_and_the_missing_module(monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "uvicorn")
    require("json", extra="server", what="a check")  # installed: nothing happens
    with pytest.raises(MissingExtra) as raised:
        require("json", "uvicorn", extra="server", what="a check")
    assert str(raised.value) == f"a check {SERVER_LINE}"
    assert (raised.value.extra, raised.value.name) == ("server", "uvicorn")
    assert isinstance(raised.value, RecalleryError)
    assert isinstance(raised.value, ImportError)


def test_the_console_script_without_click_exits_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide(monkeypatch, "click")
    monkeypatch.setattr(sys, "argv", ["recallery", "serve"])
    with pytest.raises(SystemExit) as exited:
        console_script()
    assert exited.value.code == f"Error: the recallery command {SERVER_LINE}"


def test_the_console_script_runs_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["recallery", "--version"])
    with pytest.raises(SystemExit) as exited:
        console_script()
    assert exited.value.code == 0


def test_serve_without_the_server_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, "uvicorn")
    result = CliRunner().invoke(cli.main, ["serve", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: recallery serve {SERVER_LINE}\n"
    assert list(tmp_path.iterdir()) == []  # it stopped before opening the data directory


def test_a_command_on_postgres_without_the_postgres_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, "psycopg")
    monkeypatch.setenv("RECALLERY_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    result = CliRunner().invoke(cli.main, ["user", "list", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {POSTGRES_LINE}\n"


def test_open_store_on_postgres_without_the_postgres_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide(monkeypatch, "pgvector")
    with pytest.raises(MissingExtra, match=r'^the PostgreSQL store .*pip install "\.\[postgres\]"'):
        open_store(Settings(database_url="postgresql://nobody@127.0.0.1:1/none"))


@pytest.mark.parametrize("name", ["Client", "AsyncClient"])
def test_the_sdk_client_without_httpx(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "httpx")
    with pytest.raises(MissingExtra) as raised:
        getattr(recallery, name)
    assert str(raised.value) == f"recallery.{name} {SERVER_LINE}"


def test_traces_without_the_otel_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from recallery.api.tracing import otlp_provider

    hide(monkeypatch, "opentelemetry.sdk")
    with pytest.raises(MissingExtra) as raised:
        otlp_provider()
    line = (
        'RECALLERY_OTEL=1 (traces) needs the otel extra: pip install ".[otel]" in a clone of '
        "recallery (it is not on PyPI yet)"
    )
    assert str(raised.value) == line
