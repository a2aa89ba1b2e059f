"""Running recallery: ``serve`` (the REST API, web UI and /mcp, with the background worker),
``worker`` alone, and ``mcp`` over stdio for desktop agents."""

from __future__ import annotations

import importlib.util
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from recallery import jobs
from recallery.cli.common import (
    acting,
    data_dir_option,
    engine_on,
    fail_cleanly,
    main,
    settings_for,
)
from recallery.engine import Engine
from recallery.errors import KeyRevoked
from recallery.extras import require
from recallery.models import User
from recallery.settings import Settings

WORKER_STOP_TIMEOUT_S = 30.0


@main.command()
@data_dir_option
@click.option("--host", default=None, help="Interface to listen on (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port to listen on (default 9380).")
@click.option("--worker/--no-worker", default=True, help="Run background jobs in this process.")
@click.option("--log-level", default="info", show_default=True)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one JSON object a line (for a log collector).",
)
@click.option(
    "--forwarded-allow-ips",
    "forwarded",
    envvar="RECALLERY_FORWARDED_ALLOW_IPS",
    show_envvar=True,
    default=None,
    help="Proxies whose X-Forwarded-For / X-Forwarded-Proto are trusted: comma-separated "
    "addresses or networks (10.0.0.0/8), or * for any. Default: none (the peer's address "
    "counts, which is what throttling of failed keys goes by).",
)
@fail_cleanly
def serve(
    data_dir: Path | None,
    host: str | None,
    port: int | None,
    worker: bool,
    log_level: str,
    log_format: str,
    forwarded: str | None,
) -> None:
    """Serve the REST API (and the background worker) on the embedded store."""
    require("fastapi", "uvicorn", extra="server", what="recallery serve")
    import uvicorn

    from recallery.api import create_app

    settings = settings_for(data_dir, host=host, port=port)
    proxies = trusted_proxies(forwarded)
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
        app.state.readiness.worker = thread  # /readyz checks it is alive
        # Search indexes the store keeps in memory are built now rather than by the first
        # search; a search arriving meanwhile waits for the index it needs. /readyz says
        # ready once they are built.
        warm = app.state.readiness.warm
        threading.Thread(target=warm, args=(engine,), name="recallery-warm", daemon=True).start()
        _announce(settings, admin, new_key)
        config = server_config(app, settings, log_level, log_format == "json", proxies)
        try:
            with _stopping_on_signals():
                uvicorn.Server(config).run()
        finally:
            stop.set()
            if thread is not None:
                thread.join(WORKER_STOP_TIMEOUT_S)


def trusted_proxies(value: str | None) -> list[str]:
    """The proxies of ``--forwarded-allow-ips``: each an IP address, a network
    (``10.0.0.0/8``, host bits zero) or ``*`` (any); anything else is refused naming the
    option (uvicorn would take it for a literal that never matches)."""
    import ipaddress

    found = [p.strip() for p in (value or "").split(",") if p.strip()]
    if "*" in found:
        return ["*"]
    for proxy in found:
        try:
            ipaddress.ip_network(proxy) if "/" in proxy else ipaddress.ip_address(proxy)
        except ValueError:
            raise click.BadParameter(
                f"{proxy!r} is not an IP address, a network (10.0.0.0/8) or *",
                param_hint="'--forwarded-allow-ips'",
            ) from None
    return found


def server_config(
    app: Any, settings: Settings, log_level: str, json_lines: bool, proxies: list[str]
) -> Any:
    """uvicorn's configuration for ``serve``. Forwarded headers are read only from the
    ``proxies`` named (none by default): uvicorn would otherwise trust them from loopback, or
    from whatever ``FORWARDED_ALLOW_IPS`` says, and a local client could pick the address it
    is throttled by."""
    import uvicorn

    from recallery.api.logs import log_config

    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        log_config=log_config(json_lines),  # access lines without query strings
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
    )


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


def command() -> str:
    """How to run this ``recallery`` from here: its name when that is the one on PATH, else
    its path (``scripts/serve`` runs ``.venv/bin/recallery``, which is not on PATH)."""
    ran = Path(sys.argv[0])
    if ran.name != "recallery" or not ran.exists():
        return "recallery"
    found = shutil.which("recallery")
    if found is not None and Path(found).resolve() == ran.resolve():
        return "recallery"
    try:
        return str(ran.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(ran.resolve())


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
    else:
        lines.append(
            f"  admin '{admin.name}' has a key already (it was shown once, at the first start)"
        )
    data = f" --data-dir {settings.data_dir}" if str(settings.data_dir) != "data" else ""
    lines.append(f"  lost the key? {command()} key create --user {admin.name}{data}")
    click.echo("\n".join(lines))
    sys.stdout.flush()


@main.command()
@data_dir_option
@fail_cleanly
def worker(data_dir: Path | None) -> None:
    """Run background jobs only (for a separate worker process)."""
    with Engine.open(settings=settings_for(data_dir)) as engine:
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
@fail_cleanly
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
    with engine_on(data_dir) as (engine, root):
        actor = engine.authenticate(api_key) if api_key else acting(engine, root, user_name)
        run_stdio(EngineBackend(engine, actor, key=api_key or None), engine.log_request)
