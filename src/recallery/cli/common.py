"""What every command shares: the ``recallery`` group, the ``--data-dir`` option, an engine
on the data directory acting as its administrator, and errors ended as one line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from recallery.engine import Engine
from recallery.errors import MissingExtra, NotFound, RecalleryError
from recallery.models import Principal, User
from recallery.settings import Settings

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the embedded database lives (env RECALLERY_DATA_DIR, default ./data).",
)


def settings_for(data_dir: Path | None, **overrides: object) -> Settings:
    return Settings.from_env(None, data_dir=data_dir, **overrides)


@contextmanager
def engine_on(data_dir: Path | None) -> Iterator[tuple[Engine, Principal]]:
    """An engine on the data directory and its administrator, acting for the command."""
    with Engine.open(settings=settings_for(data_dir)) as engine:
        admin, _ = engine.ensure_admin(None, create_key=False)
        yield engine, engine.principal(admin.id)


def fail_cleanly(command: Callable[..., None]) -> Callable[..., None]:
    """recallery errors end the command with their message and exit status 1."""

    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except MissingExtra as exc:
            raise click.ClickException(str(exc)) from exc
        except RecalleryError as exc:
            raise click.ClickException(f"{type(exc).__name__}: {exc}") from exc

    run.__name__ = command.__name__
    run.__doc__ = command.__doc__
    return run


@click.group()
@click.version_option(package_name="recallery")
def main() -> None:
    """recallery: a memory service for AI agents."""


def find_user(engine: Engine, admin: Principal, name_or_id: str) -> User:
    for user in engine.list_users(admin):
        if name_or_id in (user.name, user.id):
            return user
    raise NotFound(f"User '{name_or_id}' not found.")


def acting(engine: Engine, root: Principal, user_name: str | None) -> Principal:
    return root if user_name is None else engine.principal(find_user(engine, root, user_name).id)
