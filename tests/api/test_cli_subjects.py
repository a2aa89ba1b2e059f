"""The command line's data-subject request: a dry run that prints the receipt, then --apply;
another user's entries, and a memory the acting user may not erase, stay."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from recallery import Engine
from recallery.cli import main
from recallery.models import Scope
from recallery.providers.registry import ModelRegistry
from recallery.store.filters import EntryFilter
from recallery.store.sqlite import SQLiteStore
from recallery.testing import DeterministicEmbedder


def test_subject_erase_prints_the_dry_run_then_applies(tmp_path: Path) -> None:
    embedder = DeterministicEmbedder()
    with Engine(
        SQLiteStore(tmp_path / "recallery.db"), models=ModelRegistry(builtin=lambda: embedder)
    ) as engine:
        alice = engine.principal(engine.create_user("alice").id)
        bob = engine.principal(engine.create_user("bob").id)
        memories = [
            engine.create_memory(
                o, name="m", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
            )
            for o in (alice, bob)
        ]
        for owner, m in zip((alice, bob), memories, strict=True):
            for user in ("tom", "ann"):
                engine.add_turn(
                    owner, [m.id], user_input=f"{user} says hi", agent_response="ok", user_id=user
                )

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, "--data-dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        return result.output

    dry = run("subject", "erase", "tom", "--user", "alice", "--reason", "asked")
    assert dry.startswith("Dry run: would erase 1 entries about user 'tom'")
    assert "--apply" in dry
    done = run("subject", "erase", "tom", "--user", "alice", "--apply")
    assert done.startswith("Done: erase 1 entries")
    with Engine.open(tmp_path) as engine, engine.store.read() as r:
        users = {
            m.tenant_id: sorted(
                e.user_id
                for e in r.entries(Scope.of(m.id), EntryFilter(current_only=False), limit=10)[0]
            )
            for m in memories
        }
    assert users == {memories[0].tenant_id: ["ann"], memories[1].tenant_id: ["ann", "tom"]}
    refused = CliRunner().invoke(
        main, ["subject", "forget", "tom", "--user", "nobody", "--data-dir", str(tmp_path)]
    )
    assert refused.exit_code == 1 and "nobody" in refused.output


def test_repair_links_lists_then_undoes_a_link_between_two_users(tmp_path: Path) -> None:
    embedder = DeterministicEmbedder()
    with Engine(
        SQLiteStore(tmp_path / "recallery.db"), models=ModelRegistry(builtin=lambda: embedder)
    ) as engine:
        admin, _ = engine.ensure_admin()
        actor = engine.principal(admin.id)
        m = engine.create_memory(
            actor, name="support", memory_type=["raw"], embd_id="x@Builtin", llm_id="y@Z"
        )
        (toms,) = engine.add_turn(
            actor, [m.id], user_input="I live in Manchester.", agent_response="ok", user_id="tom"
        )
        (anas,) = engine.add_turn(
            actor, [m.id], user_input="我住在巴伦西亚。", agent_response="好", user_id="ana"
        )
        with engine.store.write() as w:  # as an earlier release wrote it, the guard bypassed
            w.conn.execute(
                "UPDATE entries SET superseded_by = ?, retired_at = 1 WHERE message_id = ?",
                [anas.message_id, toms.message_id],
            )

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, "--data-dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        return result.output

    listed = run("repair-links")
    assert listed.startswith("Would undo 1 version link across users.")
    assert f"message {toms.message_id} (user 'tom')" in listed and "(user 'ana')" in listed
    assert run("repair-links", "--apply", "--reason", "upgrade").startswith("Undid 1 version link")
    assert run("repair-links").startswith("No version link joins two users' entries")
    with Engine.open(tmp_path) as engine, engine.store.read() as r:
        tom = r.entry(Scope.of(m.id), toms.message_id)
    assert tom is not None and (tom.retired_at, tom.superseded_by) == (None, None)
