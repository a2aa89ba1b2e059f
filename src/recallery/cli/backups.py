"""``recallery backup`` and ``recallery restore``: the store's files, taken and put back;
``recallery restore-erasures``: the erasure ledgers replayed after ``pg_restore``.

Backup and restore work on the data directory's files rather than through an open engine
(a restore needs the store closed everywhere); :mod:`recallery.services.backup` does the
work, :mod:`recallery.services.ledgers` the replay.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import click

from recallery.cli.common import data_dir_option, fail_cleanly, main, settings_for
from recallery.services import backup as backups
from recallery.services import ledgers as replays

ledgers_option = click.option(
    "--erasures",
    "ledgers",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Another erasure ledger to apply (repeatable): the lost store's erasures.jsonl.",
)


def _now() -> datetime:
    return datetime.now().astimezone()


@main.command("backup")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@data_dir_option
@fail_cleanly
def backup_command(dest: Path, data_dir: Path | None) -> None:
    """Copy the live store into the new directory DEST, with a manifest (safe while serving)."""
    manifest = backups.backup(settings_for(data_dir), dest, _now())
    click.echo(json.dumps(asdict(manifest), indent=2))


@main.command("restore")
@click.argument("source", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--replace", is_flag=True, help="Overwrite the store in the data directory.")
@ledgers_option
@data_dir_option
@fail_cleanly
def restore_command(
    source: Path, replace: bool, ledgers: tuple[Path, ...], data_dir: Path | None
) -> None:
    """Restore the backup in SOURCE into the data directory (no process may have it open),
    erased again of everything the erasure ledgers record; the store is replaced only once
    the erased copy passed its checks."""
    report = backups.restore(
        settings_for(data_dir), source, _now(), ledgers=ledgers, replace=replace
    )
    click.echo(json.dumps(asdict(report), indent=2))


@main.command("restore-erasures")
@ledgers_option
@data_dir_option
@fail_cleanly
def restore_erasures_command(ledgers: tuple[Path, ...], data_dir: Path | None) -> None:
    """Erase again, from the store as it is now, everything the erasure ledgers record (the
    store's own, RECALLERY_ERASURE_LEDGER, and each --erasures): run it after pg_restore of
    a dump taken before those erasures, before any server starts."""
    report = replays.restore_erasures(settings_for(data_dir), _now(), ledgers)
    click.echo(json.dumps(asdict(report), indent=2))
