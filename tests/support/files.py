"""Helpers for tests about the store's files: an engine opened on a data directory as
``serve`` opens it (erasure ledger and lock included), the traces of a text left in files,
and a file's permission bits."""

from __future__ import annotations

import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from recallery import Engine
from recallery.providers.registry import ModelRegistry
from recallery.settings import Settings
from recallery.store import open_store
from recallery.testing import DeterministicEmbedder, FrozenClock


@contextmanager
def engine_in(data_dir: Path, clock: FrozenClock, **settings: object) -> Iterator[Engine]:
    """An engine on ``data_dir`` as ``serve`` opens it (ledger and lock included)."""
    opened = Settings(data_dir=data_dir, **settings)  # type: ignore[arg-type]
    embedder = DeterministicEmbedder()
    engine = Engine(
        open_store(opened),
        models=ModelRegistry(builtin=lambda: embedder),
        clock=clock,
        settings=opened,
    )
    try:
        yield engine
    finally:
        engine.close()


def traces(files: Iterable[Path], *texts: str) -> list[tuple[str, str]]:
    """(file name, text) for each of ``texts`` found in one of ``files``, as written or in
    lower case; files that do not exist are skipped."""
    found = []
    for file in files:
        if not file.is_file():
            continue
        data = file.read_bytes()
        for text in texts:
            if text.encode() in data or text.lower().encode() in data:
                found.append((file.name, text))
    return found


def live_files(db: Path) -> list[Path]:
    """The store's database file and the files SQLite keeps beside it."""
    return [db, *(db.with_name(db.name + side) for side in ("-wal", "-shm", "-journal"))]


def mode(path: Path) -> int:
    """``path``'s permission bits (0o600 for a file only its owner reads and writes)."""
    return stat.S_IMODE(path.stat().st_mode)
