"""Data-subject requests from the command line: forget or erase everything about one end user
(the ``user_id`` stored on entries) across the memories the acting user may change. A dry
run that prints the receipt unless ``--apply`` is given; and ``repair-links``, which undoes
version links an earlier release wrote between two people's entries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from recallery.cli.common import acting, data_dir_option, engine_on, fail_cleanly, main
from recallery.requests.subjects import SubjectAction
from recallery.wire.subjects import receipt_lines


@main.group()
def subject() -> None:
    """Everything about one end user: forget or erase it (a dry run unless --apply)."""


def _request(
    action: SubjectAction,
    user_id: str,
    apply: bool,
    reason: str,
    user_name: str | None,
    data_dir: Path | None,
    token: str | None,
    everywhere: bool,
) -> None:
    with engine_on(data_dir) as (engine, root):
        actor = acting(engine, root, user_name)
        operation = (
            engine.forget_subject if action is SubjectAction.FORGET else engine.erase_subject
        )
        receipt = operation(
            actor, user_id, dry_run=not apply, reason=reason, token=token, everywhere=everywhere
        )
        for line in receipt_lines(receipt):
            click.echo(line)


def _options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        (
            click.argument("user_id"),
            click.option("--apply", is_flag=True, help="Make the change (default: count only)."),
            click.option("--reason", default="", help="Why, for the audit log."),
            click.option(
                "--token",
                default=None,
                help="With --apply: the dry run's token (changes what it listed, or nothing).",
            ),
            click.option(
                "--everywhere",
                is_flag=True,
                help="An operator's request: every tenant's memories (admin only).",
            ),
            click.option(
                "--user",
                "user_name",
                default=None,
                help="Act as this user, over the memories it may change (default: the admin).",
            ),
            data_dir_option,
        )
    ):
        command = option(command)
    return command


@subject.command("forget")
@_options
@fail_cleanly
def subject_forget(user_id: str, apply: bool, reason: str, **kw: Any) -> None:
    """Forget every entry of USER_ID: their turns, what was extracted from them and their
    older versions (each listed with its user and why)."""
    _request(SubjectAction.FORGET, user_id, apply, reason, **kw)


@subject.command("erase")
@_options
@fail_cleanly
def subject_erase(user_id: str, apply: bool, reason: str, **kw: Any) -> None:
    """Erase every entry of USER_ID with their versions and extracts (cannot be undone)."""
    _request(SubjectAction.ERASE, user_id, apply, reason, **kw)


@main.command("repair-links")
@click.option("--apply", is_flag=True, help="Undo the links (default: list them only).")
@click.option("--reason", default="", help="Why, for the audit log.")
@click.option(
    "--everywhere", is_flag=True, help="Every tenant's memories (admin only; default: yours)."
)
@click.option("--user", "user_name", default=None, help="Act as this user (default: the admin).")
@data_dir_option
@fail_cleanly
def repair_links(
    apply: bool, reason: str, everywhere: bool, user_name: str | None, data_dir: Path | None
) -> None:
    """Find version links that join two people's entries (written before facts were kept
    per person) and, with --apply, undo them: each older entry current again, audited."""
    with engine_on(data_dir) as (engine, root):
        actor = acting(engine, root, user_name)
        report = engine.repair_links(actor, dry_run=not apply, reason=reason, everywhere=everywhere)
        if not report.links:
            click.echo("No version link joins two users' entries: nothing to repair.")
            return
        head = "Would undo" if report.dry_run else "Undid"
        count = len(report.links)
        click.echo(f"{head} {count} version link{'s' if count > 1 else ''} across users.")
        for link in report.links:
            click.echo(f"  {link.line()}")
        if report.dry_run and report.links:
            click.echo("Nothing changed; run again with --apply to undo them.")
