"""Who has the SQLite store open: every process that opens it holds a shared lock on a file
beside it (``recallery.db.lock``) while it does, and ``recallery restore`` takes that lock
exclusively, so it never replaces a file that a server, a worker or a command has open.

``flock`` locks belong to the open file, so a process that dies lets go of its lock at once:
there is no stale pid file to clean up. On a system without ``fcntl`` nothing is locked.
"""

from __future__ import annotations

import os
from pathlib import Path

from recallery.errors import Conflict

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock")


class StoreLock:
    """A held lock on a store's lock file; :meth:`release` lets go (closing the file)."""

    def __init__(self, db_path: Path, *, exclusive: bool) -> None:
        self.path = lock_path(db_path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is None:
            return
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        try:
            fcntl.flock(self._fd, mode)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            if exclusive:
                raise Conflict(
                    f"the store {db_path} is open in a running process (a server, worker or "
                    "command holds its lock); stop it first"
                ) from None
            raise Conflict(f"the store {db_path} is being restored; try again after") from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


__all__ = ["StoreLock", "lock_path"]
