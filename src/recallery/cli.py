"""The ``recallery`` command: serve the API (with the background worker), manage users, keys
and teams, and move memories in and out as JSONL. Everything goes through the engine.

Commands other than ``serve`` work on the data directory directly, as its administrator
(the first admin user, created on an empty directory): whoever can run them can read the
files anyway.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from recallery import jobs, transfer
from recallery.engine import Engine
from recallery.errors import KeyRevoked, MissingExtra, NotFound, RecalleryError
from recallery.extras import require
from recallery.models import Principal, User
from recallery.settings import Settings

WORKER_STOP_TIMEOUT_S = 30.0

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the embedded database lives (env RECALLERY_DATA_DIR, default ./data).",
)


def _settings(data_dir: Path | None, **overrides: object) -> Settings:
    return Settings.from_env(None, data_dir=data_dir, **overrides)


@contextmanager
def _engine(data_dir: Path | None) -> Iterator[tuple[Engine, Principal]]:
    """An engine on the data directory and its administrator, acting for the command."""
    with Engine.open(settings=_settings(data_dir)) as engine:
        admin, _ = engine.ensure_admin(None, create_key=False)
        yield engine, engine.principal(admin.id)


def _fail_cleanly(command: Callable[..., None]) -> Callable[..., None]:
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


# --- serve ----------------------------------------------------------------------------------


@main.command()
@data_dir_option
@click.option("--host", default=None, help="Interface to listen on (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port to listen on (default 9380).")
@click.option("--worker/--no-worker", default=True, help="Run background jobs in this process.")
@click.option("--log-level", default="info", show_default=True)
@_fail_cleanly
def serve(
    data_dir: Path | None, host: str | None, port: int | None, worker: bool, log_level: str
) -> None:
    """Serve the REST API (and the background worker) on the embedded store."""
    require("fastapi", "uvicorn", extra="server", what="recallery serve")
    import uvicorn

    from recallery.api import create_app
    from recallery.api.logs import log_config

    settings = _settings(data_dir, host=host, port=port)
    with Engine.open(settings=settings) as engine:
        try:
            admin, new_key = engine.ensure_admin(settings.admin_api_key)
        except KeyRevoked:
            click.echo(
                "recallery: RECALLERY_ADMIN_API_KEY names a revoked key; it stays revoked and "
                "does not authenticate. Set a new key, or use another live admin key.",
                err=True,
            )
            admin, new_key = engine.ensure_admin(None)
        app = create_app(engine, settings)
        _mount_mcp(app, engine, settings)
        stop = threading.Event()
        thread = jobs.start_worker(engine, stop) if worker else None
        # Search indexes the store keeps in memory are built now rather than by the first
        # search; a search arriving meanwhile waits for the index it needs.
        threading.Thread(target=engine.warm, name="recallery-warm", daemon=True).start()
        _announce(settings, admin, new_key)
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level=log_level,
            log_config=log_config(),  # access lines without query strings
        )
        try:
            with _stopping_on_signals():
                uvicorn.Server(config).run()
        finally:
            stop.set()
            if thread is not None:
                thread.join(WORKER_STOP_TIMEOUT_S)


@contextmanager
def _stopping_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT end ``serve`` through its shutdown code (worker stopped, store
    closed), with status 0. The server catches them while it runs and, once it has shut
    down, raises them again at this process: without a handler of ours that second signal
    would kill the process before anything is closed."""
    quiet = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in quiet.items():
            signal.signal(sig, handler)


def _mount_mcp(app: Any, engine: Engine, settings: Settings) -> None:
    """MCP over streamable HTTP at /mcp, when the mcp extra is installed."""
    if importlib.util.find_spec("mcp") is None:
        return
    from recallery.mcp import http as mcp_http

    mcp_http.mount(app, engine, mcp_http.security_for(settings.host, settings.port))


def _announce(settings: Settings, admin: User, new_key: str | None) -> None:
    url = f"http://{settings.host}:{settings.port}"
    lines = [
        f"recallery is serving {settings.data_dir.resolve()}",
        f"  web:  {url}/",
        f"  API:  {url}/api/v1",
        f"  docs: {url}/docs",
    ]
    if new_key:
        lines.append(f"  admin API key for '{admin.name}' (shown once, keep it): {new_key}")
    elif settings.admin_api_key:
        lines.append(f"  admin '{admin.name}' uses the key in RECALLERY_ADMIN_API_KEY")
    click.echo("\n".join(lines))
    sys.stdout.flush()


@main.command()
@data_dir_option
@_fail_cleanly
def worker(data_dir: Path | None) -> None:
    """Run background jobs only (for a separate worker process)."""
    with Engine.open(settings=_settings(data_dir)) as engine:
        stop = threading.Event()
        try:
            jobs.Worker(engine).run_forever(stop)
        except KeyboardInterrupt:
            stop.set()


@main.command("mcp")
@data_dir_option
@click.option("--url", default=None, help="Use a running recallery server instead of a data dir.")
@click.option(
    "--api-key",
    envvar="RECALLERY_API_KEY",
    default=None,
    show_envvar=True,
    help="The key the tools act with (needed with --url; best set in the environment).",
)
@click.option("--user", "user_name", default=None, help="Without a key: act as this user.")
@_fail_cleanly
def mcp_command(
    data_dir: Path | None, url: str | None, api_key: str | None, user_name: str | None
) -> None:
    """Serve MCP over stdio (for desktop agents): on the data directory, as the key's user
    (or --user, or the admin), or against a running server (--url) with the key."""
    require("mcp", "httpx", extra="mcp", what="recallery mcp")
    from recallery.client import Client
    from recallery.mcp.backend import ClientBackend, EngineBackend
    from recallery.mcp.server import run_stdio

    if url is not None:
        if not api_key:
            raise click.UsageError("--url needs an API key: set RECALLERY_API_KEY.")
        with Client(url, api_key) as client:
            run_stdio(ClientBackend(client))
        return
    with _engine(data_dir) as (engine, root):
        actor = engine.authenticate(api_key) if api_key else _acting(engine, root, user_name)
        run_stdio(EngineBackend(engine, actor))


# --- users, keys, teams ---------------------------------------------------------------------


def _find_user(engine: Engine, admin: Principal, name_or_id: str) -> User:
    for user in engine.list_users(admin):
        if name_or_id in (user.name, user.id):
            return user
    raise NotFound(f"User '{name_or_id}' not found.")


@main.group()
def user() -> None:
    """Users."""


@user.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Make the user an administrator.")
@data_dir_option
@_fail_cleanly
def user_create(name: str, admin: bool, data_dir: Path | None) -> None:
    """Create a user and print its id."""
    with _engine(data_dir) as (engine, root):
        created = engine.add_user(root, name, admin=admin)
        click.echo(_user_line(created))


@user.command("list")
@data_dir_option
@_fail_cleanly
def user_list(data_dir: Path | None) -> None:
    """List users: id, name, admin."""
    with _engine(data_dir) as (engine, root):
        for u in engine.list_users(root):
            click.echo(_user_line(u))


def _user_line(u: User) -> str:
    return "\t".join([u.id, u.name, *(["admin"] if u.is_admin else [])])


@main.group()
def key() -> None:
    """API keys."""


@key.command("create")
@click.option("--user", "user_name", required=True, help="User name or id.")
@click.option("--name", default="", help="A label for the key.")
@click.option("--scope", multiple=True, help="Limit the key to this memory id (repeatable).")
@click.option(
    "--capability",
    "capabilities",
    multiple=True,
    type=click.Choice(["read", "write", "manage"]),
    help="Limit what the key may do (repeatable; default: everything).",
)
@data_dir_option
@_fail_cleanly
def key_create(
    user_name: str,
    name: str,
    scope: tuple[str, ...],
    capabilities: tuple[str, ...],
    data_dir: Path | None,
) -> None:
    """Create a key and print it (it is shown only this once)."""
    with _engine(data_dir) as (engine, root):
        owner = _find_user(engine, root, user_name)
        key_id, secret = engine.create_api_key(
            root, owner.id, name=name, scope=scope or None, capabilities=capabilities or None
        )
        click.echo(f"key id: {key_id}\nkey:    {secret}")


@key.command("list")
@click.option("--user", "user_name", required=True, help="User name or id.")
@data_dir_option
@_fail_cleanly
def key_list(user_name: str, data_dir: Path | None) -> None:
    """List a user's keys: id, name, scope, state."""
    with _engine(data_dir) as (engine, root):
        owner = _find_user(engine, root, user_name)
        for k in engine.list_api_keys(root, owner.id):
            scope = ",".join(k.scope) if k.scope is not None else "*"
            state = "revoked" if k.revoked_at else "live"
            click.echo(f"{k.id}\t{k.name}\t{scope}\t{state}")


@key.command("revoke")
@click.argument("key_id")
@click.option("--user", "user_name", required=True, help="The key's user (name or id).")
@data_dir_option
@_fail_cleanly
def key_revoke(key_id: str, user_name: str, data_dir: Path | None) -> None:
    """Revoke a key."""
    with _engine(data_dir) as (engine, root):
        engine.revoke_api_key(root, _find_user(engine, root, user_name).id, key_id)
        click.echo(f"revoked {key_id}")


@main.group()
def team() -> None:
    """Teams: every user owns one; members see the owner's memories shared with the team."""


@team.command("add")
@click.option("--owner", required=True, help="The team's owner (name or id).")
@click.option("--member", required=True, help="The user who joins (name or id).")
@data_dir_option
@_fail_cleanly
def team_add(owner: str, member: str, data_dir: Path | None) -> None:
    """Add a member to a user's team."""
    with _engine(data_dir) as (engine, root):
        tenant = _find_user(engine, root, owner)
        joining = _find_user(engine, root, member)
        engine.join_team(root, tenant.id, joining.id)
        click.echo(f"{joining.name} joined {tenant.name}'s team")


# --- import and export ----------------------------------------------------------------------


@main.command("export")
@click.argument("memory_id")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-")
@click.option("--user", "user_name", default=None, help="Act as this user (default: admin).")
@data_dir_option
@_fail_cleanly
def export_command(
    memory_id: str, output: Any, user_name: str | None, data_dir: Path | None
) -> None:
    """Write a memory as JSONL (configuration, then every current entry)."""
    with _engine(data_dir) as (engine, root):
        actor = _acting(engine, root, user_name)
        output.write(transfer.to_jsonl(engine.export_memory(actor, memory_id)))


@main.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("--memory-id", default=None, help="Import into this memory (default: a new one).")
@click.option("--user", "user_name", default=None, help="Act as this user (default: admin).")
@data_dir_option
@_fail_cleanly
def import_command(
    source: Any, memory_id: str | None, user_name: str | None, data_dir: Path | None
) -> None:
    """Read JSONL written by export; raw turns keep their conversation times."""
    records = transfer.parse_jsonl(source.read())
    with _engine(data_dir) as (engine, root):
        actor = _acting(engine, root, user_name)
        report = engine.import_memory(actor, memory_id, records)
        click.echo(json.dumps(transfer.report_dict(report), indent=2))


def _acting(engine: Engine, root: Principal, user_name: str | None) -> Principal:
    return root if user_name is None else engine.principal(_find_user(engine, root, user_name).id)


if __name__ == "__main__":  # pragma: no cover
    main()
