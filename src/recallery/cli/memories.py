"""Memories from the command line: list them (the ids the other commands take), export one
as JSONL, import JSONL into a new or an existing memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from recallery.cli.common import acting, data_dir_option, engine_on, fail_cleanly, find_user, main
from recallery.engine import Engine
from recallery.errors import NotFound, RecalleryError
from recallery.models import Memory, Principal
from recallery.wire import transfer


@main.group()
def memory() -> None:
    """Memories."""


@memory.command("list")
@click.option("--user", "user_name", default=None, help="Only this user's (default: everyone's).")
@data_dir_option
@fail_cleanly
def memory_list(user_name: str | None, data_dir: Path | None) -> None:
    """List memories: id, name, owner, types, entries (the ids export and import take)."""
    with engine_on(data_dir) as (engine, root):
        owners = [find_user(engine, root, user_name)] if user_name else engine.list_users(root)
        click.echo("id\tname\towner\ttypes\tentries")
        for owner in owners:
            for m in _owned(engine, engine.principal(owner.id)):
                types = ",".join(t.value for t in m.memory_types)
                click.echo(f"{m.id}\t{m.name}\t{owner.name}\t{types}\t{m.entry_count}")


def _owned(engine: Engine, owner: Principal) -> list[Memory]:
    """Every memory ``owner`` owns (not the team's it may see), page after page."""
    found: list[Memory] = []
    page = 1
    while True:
        listed = engine.list_memories(owner, owner_ids=[owner.user_id], page=page, page_size=100)
        found.extend(listed.items)
        if not listed.items or len(found) >= listed.total:
            return found
        page += 1


def _owner_hint(engine: Engine, root: Principal, memory_id: str) -> str:
    """How to reach a memory the acting user cannot see: the ``--user`` that owns it."""
    for owner in engine.list_users(root):
        if owner.id == root.user_id:
            continue
        try:
            engine.get_memory(engine.principal(owner.id), memory_id)
        except RecalleryError:
            continue
        return f" It belongs to '{owner.name}': pass --user {owner.name}."
    return " `recallery memory list` shows every memory's id."


@main.command("export")
@click.argument("memory_id")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-")
@click.option("--user", "user_name", default=None, help="Act as this user (default: admin).")
@data_dir_option
@fail_cleanly
def export_command(
    memory_id: str, output: Any, user_name: str | None, data_dir: Path | None
) -> None:
    """Write a memory as JSONL (configuration, then every current entry)."""
    with engine_on(data_dir) as (engine, root):
        actor = acting(engine, root, user_name)
        try:
            records = engine.export_memory(actor, memory_id)
        except NotFound as exc:
            hint = _owner_hint(engine, root, memory_id)
            raise click.ClickException(f"NotFound: {exc}{hint}") from exc
        output.write(transfer.to_jsonl(records))


@main.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("--memory-id", default=None, help="Import into this memory (default: a new one).")
@click.option("--user", "user_name", default=None, help="Act as this user (default: admin).")
@data_dir_option
@fail_cleanly
def import_command(
    source: Any, memory_id: str | None, user_name: str | None, data_dir: Path | None
) -> None:
    """Read JSONL written by export; raw turns keep their conversation times."""
    records = transfer.parse_jsonl(source.read())
    with engine_on(data_dir) as (engine, root):
        actor = acting(engine, root, user_name)
        try:
            report = engine.import_memory(actor, memory_id, records)
        except NotFound as exc:
            hint = _owner_hint(engine, root, memory_id) if memory_id else ""
            raise click.ClickException(f"NotFound: {exc}{hint}") from exc
        click.echo(json.dumps(transfer.report_dict(report), indent=2))
        if report.already_stored:
            click.echo(
                f"{report.already_stored} turn(s) of the file are in the memory already and "
                "were not added again.",
                err=True,
            )
