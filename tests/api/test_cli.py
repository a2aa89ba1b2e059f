"""The command line: users, keys, teams, export and import on a data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recallery import Engine
from recallery.cli import main


def run(data_dir: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data_dir)], catch_exceptions=False)
    return result


def test_users_keys_and_teams(tmp_path: Path) -> None:
    out = run(tmp_path, "user", "create", "alice")
    assert out.exit_code == 0, out.output
    alice_id = out.output.split("\t")[0]
    bob_id = run(tmp_path, "user", "create", "bob", "--admin").output.split("\t")[0]
    header, *listed = run(tmp_path, "user", "list").output.splitlines()
    assert header == "id\tname\trole"
    assert sorted(line.split("\t")[1:] for line in listed) == [
        ["admin", "admin"],
        ["alice"],
        ["bob", "admin"],
    ]
    created = run(tmp_path, "key", "create", "--user", "alice", "--name", "laptop").output
    key_id = created.split("key id: ")[1].split()[0]
    key = created.split("key:    ")[1].strip()
    with Engine.open(tmp_path) as engine:
        assert engine.authenticate(key).user_id == alice_id
    header, line = run(tmp_path, "key", "list", "--user", "alice").output.splitlines()
    assert header == "id\tname\tscope\tcapabilities\tstate"
    assert line.split("\t") == [key_id, "laptop", "*", "read,write,manage", "live"]
    assert run(tmp_path, "team", "add", "--owner", "alice", "--member", "bob").exit_code == 0
    with Engine.open(tmp_path) as engine:
        assert engine.team_members(engine.principal(alice_id), alice_id) == [bob_id]
    assert run(tmp_path, "key", "revoke", key_id, "--user", "alice").exit_code == 0
    assert "revoked" in run(tmp_path, "key", "list", "--user", "alice").output


def test_errors_end_the_command_with_their_message(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["key", "create", "--user", "nobody", "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "NotFound: User 'nobody' not found." in result.output


@pytest.mark.model
def test_export_then_import_through_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Engine.open(data) as engine:
        admin, _ = engine.ensure_admin(create_key=False)
        actor = engine.principal(admin.id)
        memory = engine.create_memory(
            actor, name="journal", memory_type=["raw"], embd_id="m@Builtin", llm_id="x@Y"
        )
        engine.add_turn(
            actor,
            [memory.id],
            user_input="hi",
            agent_response="ok",
            conversation_time="2020-01-01T00:00:00Z",
        )
    dump = tmp_path / "journal.jsonl"
    assert run(data, "export", memory.id, "-o", str(dump)).exit_code == 0
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [r["record"] for r in lines] == ["memory", "entry"]
    result = run(data, "import", str(dump))
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["imported"] == 1 and report["memory_id"] != memory.id
    with Engine.open(data) as engine:
        (copy,) = engine.recent(actor, [report["memory_id"]])
    assert copy.valid_at.year == 2020
