"""Data-subject requests from the command line: forget or erase everything about one end user
(the ``user_id`` stored on entries) across the memories the acting user may change. A dry
run that prints the receipt unless ``--apply`` is given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from recallery import subjects
from recallery.cli.common import acting, data_dir_option, engine_on, fail_cleanly, main


@main.group()
def subject() -> None:
    """Everything about one end user: forget or erase it (a dry run unless --apply)."""


def _request(
    action: subjects.SubjectAction,
    user_id: str,
    apply: bool,
    reason: str,
    user_name: str | None,
    data_dir: Path | None,
) -> None:
    with engine_on(data_dir) as (engine, root):
        actor = acting(engine, root, user_name)
        operation = (
            engine.forget_subject
            if action is subjects.SubjectAction.FORGET
            else engine.erase_subject
        )
        receipt = operation(actor, user_id, dry_run=not apply, reason=reason)
        for line in subjects.receipt_lines(receipt):
            click.echo(line)


def _options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        (
            click.argument("user_id"),
            click.option("--apply", is_flag=True, help="Make the change (default: count only)."),
            click.option("--reason", default="", help="Why, for the audit log."),
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
def subject_forget(
    user_id: str, apply: bool, reason: str, user_name: str | None, data_dir: Path | None
) -> None:
    """Forget every current entry of USER_ID and what was extracted from their turns."""
    _request(subjects.SubjectAction.FORGET, user_id, apply, reason, user_name, data_dir)


@subject.command("erase")
@_options
@fail_cleanly
def subject_erase(
    user_id: str, apply: bool, reason: str, user_name: str | None, data_dir: Path | None
) -> None:
    """Erase every entry of USER_ID with its versions and extracts (cannot be undone)."""
    _request(subjects.SubjectAction.ERASE, user_id, apply, reason, user_name, data_dir)
